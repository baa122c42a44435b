"""Derive conformance cases from the spec alone: legal configurations and must-reject mutations.

Candidate configurations start from each mode's ``example`` tiles; dtypes, valid regions,
physical shapes and layouts are varied generically, and only what ``validate`` accepts
(or, for must-reject cases, what it rejects with exactly one rule id) is kept.

The search asks ``validate`` only what can change its outcome.  ``rule_reads`` says which
(operand, field) pairs each rule's expressions read; from it, a rounding search skips roundings a
failed rule rules out (a rule reading only cols fails for every rounding of rows), and the
must-reject search skips mutations whose changed fields only rules that already have their case
read.  Both skips are exact: the cases are the same as with a check of every candidate.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from .. import attrs
from ..asm.types import format_descriptor, parse_descriptor
from ..expr.ast import Attr, walk
from ..model import Database, Mode, OpSpec, Rule
from ..reads import ANY, Read, rule_reads
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from ..validator import (
    Report,
    Violation,
    failing_rules,
    judge,
    rules_for,
    sizes_only,
    tile_verdicts,
    type_violations,
)
from . import views
from .shaping import Tiles, example_target, shaper

# Valid-region targets (rows, cols) besides the example's own: 1-row, 1-column,
# non-multiples of any block size, and a few larger ones.
TARGETS: tuple[tuple[int, int], ...] = ((1, 1), (1, 37), (5, 1), (3, 5), (7, 19), (16, 64), (2, 130), (33, 9))
PATTERNS = ("random", "edge", "ties")  # plus "ieee" where numerics.exact_specials names the profile


@dataclass(frozen=True)
class Case:
    """One conformance case: parameters only; data is derived from ``seed`` and ``pattern``."""

    op: str
    mode: str
    profile: str
    tiles: dict[str, str] = field(hash=False)  # operand -> canonical descriptor text
    seed: int = 0
    pattern: str = "random"
    reject: str | None = None  # rule id a backend must reject the case for

    @property
    def positive(self) -> bool:
        """True when the spec accepts the case (no rule a backend must reject it for)."""
        return self.reject is None

    @property
    def kind(self) -> str:
        return "positive" if self.positive else "reject"

    def parsed(self, db: Database) -> Tiles:
        return {n: descriptor(db, t) for n, t in self.tiles.items()}


def seed_of(text: str) -> int:
    return zlib.crc32(text.encode())


def descriptor_dtype(text: str) -> str:
    """The element type of a tile or view descriptor ``"loc, 16x64xf4e2m1x2, ..."``: the words of its shape
    field after the numeric dimensions (a dtype name may itself contain an ``x``)."""
    words = text.split(",")[1].strip().split("x")
    return "x".join(itertools.dropwhile(str.isdigit, words))


def dtype_combos(db: Database, op: OpSpec, mode: Mode, profile: str) -> list[dict[str, str]]:
    """Every legal binding of the mode's type variables on the profile, in table order (one value for a
    variable only scratch tiles use), each with attribute values (see ``_with_attrs``)."""
    table = op.dtypes.get(profile)
    if table is None:
        return []
    out: list[dict[str, str]] = []
    seen: set[tuple[str, ...]] = set()
    # A type variable only scratch tiles use does not change any result: one value of it is enough,
    # preferably one another variable already has (scratch tiles often must match the source).
    scratch = {v for v in mode.type_vars if all(o.role == "tmp" for o in mode.operands if o.dtype == v)}
    for row in table.rows:
        if mode.name not in row.modes:
            continue
        data_vars = [v for v in mode.type_vars if v not in scratch]
        for data_values in itertools.product(*(row.types[v] for v in data_vars)):
            chosen = dict(zip(data_vars, data_values, strict=True))
            for v in scratch:
                allowed = row.types[v]
                chosen[v] = next((d for d in data_values if d in allowed), allowed[0])
            values = tuple(chosen[v] for v in mode.type_vars)
            if values not in seen:
                seen.add(values)
                out.append(dict(zip(mode.type_vars, values, strict=True)))
    return _with_attrs(db, op, mode, profile, out)


def _with_attrs(db: Database, op: OpSpec, mode: Mode, profile: str,
                combos: list[dict[str, str]]) -> list[dict[str, str]]:
    """Give each binding a value for every attribute operand, rotating through its sample values so that
    every value appears (extra bindings are added when there are more values than dtype combinations).
    A value the rules forbid with that binding is passed over for the next one."""
    if not mode.attrs or not combos:
        return combos
    widest = max(len(attrs.sample_values(db.isa, a)) for a in mode.attrs)
    out = []
    for k in range(max(len(combos), widest)):
        base = combos[k % len(combos)]
        candidates = []
        for shift in range(widest):
            binding = dict(base)
            for a in mode.attrs:
                values = attrs.sample_values(db.isa, a)
                binding[a.name] = values[(k + shift) % len(values)]
            candidates.append(binding)
        chosen = next((b for b in candidates if feasible(db, op, mode, profile, b)), candidates[0])
        if chosen not in out:
            out.append(chosen)
    return out


def feasible(db: Database, op: OpSpec, mode: Mode, profile: str, binding: dict[str, str]) -> bool:
    """Whether the binding is legal in at least one of the shape/layout variants cases are drawn from."""
    state = _search(db)
    memo = state.feasible
    key = (op.name, mode.name, profile, tuple(sorted(binding.items())))
    if key not in memo:
        # a binding some variant has already found a legal configuration for is feasible: a case's search tells
        memo[key] = key in state.legal or any(
            configurations(db, op, mode, profile, binding, target, partial, layout) is not None
            for target, partial, layout in variant_space(db, op, mode))
    return memo[key]


def descriptor(db: Database, text: str) -> TileDesc | ScalarDesc | AttrDesc:
    """``parse_descriptor``, remembered (cases repeat the same descriptors)."""
    memo = _search(db).descriptors
    desc = memo.get(text)
    if desc is None:
        desc = memo[text] = parse_descriptor(text, db.isa)
    return desc


def example_tiles(db: Database, mode: Mode) -> Tiles:
    return {o.name: descriptor(db, mode.example.tiles[o.name]) for o in mode.operands}


def base_tiles(db: Database, mode: Mode) -> list[Tiles]:
    """The tiles of the example and of each further base (``bases:``) the cases start from."""
    return [{o.name: descriptor(db, ex.tiles[o.name]) for o in mode.operands} for ex in mode.examples]


def base_variants(db: Database, mode: Mode, binding: dict[str, str] | None = None) -> list[Tiles]:
    """The layout variants of every base, the example's first (typed with ``binding`` when given)."""
    out: list[Tiles] = []
    for base in base_tiles(db, mode):
        typed = with_dtypes(db, mode, base, binding) if binding is not None else base
        out.extend(layout_variants(db, typed, pad_readers(mode)))
    return out


def with_dtypes(db: Database, mode: Mode, tiles: Tiles, binding: dict[str, str]) -> Tiles:
    out: Tiles = {}
    for o in mode.operands:
        t = tiles[o.name]
        if o.is_attr:
            out[o.name] = AttrDesc(binding[o.name]) if o.name in binding else t
        elif isinstance(t, ScalarDesc):
            out[o.name] = ScalarDesc(binding[o.dtype])
        elif isinstance(t, GlobalDesc):
            out[o.name] = views.retyped(db.isa, t, binding[o.dtype])
        else:
            out[o.name] = t.with_(dtype=binding[o.dtype])
    return out


def _scale_exps() -> list[tuple[int, int]]:
    pairs = [(kr, kc) for kr in range(7) for kc in range(7)]
    return sorted(pairs, key=lambda p: (p[0] + p[1], p[0]))


SCALES = _scale_exps()


def reshape(
    db: Database, op: OpSpec, mode: Mode, profile: str, base: Tiles, target: tuple[int, int], partial: bool,
    accept: Callable[[Report], bool], hint: list[tuple[int, int]] | None = None,
    blocked: Callable[[OpSpec, Report], tuple[bool, bool, bool]] | None = None, inner: int | None = None,
    screened: bool = False,
) -> Tiles | None:
    """Map ``base`` (example-shaped tiles) onto valid region ``target`` as the mode's ``shapes`` say (see
    ``shaping``).  Physical dimensions are the valid ones rounded up to a power of
    two (strictly larger when ``partial``); the smallest rounding ``accept`` likes wins.  ``hint``
    (a list) remembers the rounding that worked last and is tried first.  ``blocked`` says, from a
    rejected rounding's report, whether no rounding, no other row rounding or no other column rounding
    can be accepted; the search skips those (it finds the same rounding, with fewer checks).
    ``inner``, the third extent of the region (a matmul's K; default rows + cols - 1).
    ``screened`` (for an ``accept`` that wants no violation at all): once a rounding fails only rules that
    read rows or cols, later roundings are judged by those rules alone, and fully checked only when they
    pass them.
    """
    bad_rows: set[int] = set()
    bad_cols: set[int] = set()
    screen: tuple[Rule, ...] | None = None
    shaped = shaper(db.isa, base, target, partial, mode.shapes, inner)
    for kr, kc in ([hint[0]] if hint else []) + SCALES:
        if kr in bad_rows or kc in bad_cols:
            continue
        tiles = shaped(kr, kc)
        failing = _screened(db, op, mode, profile, tiles, screen) if screen is not None else None
        if failing:  # exactly the rule ids a full check would report (see below)
            report = Report(op.name, mode.name, profile, tuple(Violation(r, (), "", "static") for r in failing), ())
        else:
            report = check(db, op, mode, profile, tiles)
            if screened and screen is None and report.violations and not report.deferred and all(
                    _physical(db, op, mode, r) for r in report.rule_ids):
                # Roundings change only the tiles' rows and cols.  Every check that reads neither passed
                # here and passes at every rounding, so from now on the rules that read them decide.
                screen = _physical_rules(db, op, mode, profile)
        if accept(report):
            if hint is not None:
                hint[:] = [(kr, kc)]
            return tiles
        if blocked is not None:
            hopeless, row_bad, col_bad = blocked(op, report)
            if hopeless:
                return None
            if row_bad:
                bad_rows.add(kr)
            if col_bad:
                bad_cols.add(kc)
    return None


def legal(report: Report) -> bool:
    return report.ok and not report.deferred


def check(db: Database, op: OpSpec, mode: Mode, profile: str, tiles: Tiles) -> Report:
    """``validate``'s verdict on ``tiles``: its rule ids and deferred checks (the search reads no sentence)."""
    return judge(db, op, mode, profile, tiles)


_PAD_READERS: dict[int, tuple[Mode, tuple[str, ...]]] = {}  # id(mode) -> (mode, its pad readers)


def pad_readers(mode: Mode) -> tuple[str, ...]:
    """Operands whose pad value the mode's semantics read (``t.pad``): their pad values are varied too."""
    known = _PAD_READERS.get(id(mode))
    if known is not None and known[0] is mode:
        return known[1]
    names = {n.obj for stmt in mode.semantics for root in (stmt.value, stmt.when) if root is not None
             for n in walk(root) if isinstance(n, Attr) and n.name == "pad"}
    _PAD_READERS[id(mode)] = (mode, tuple(sorted(names)))
    return _PAD_READERS[id(mode)][1]


def layout_variants(db: Database, base: Tiles, pads: tuple[str, ...] = ()) -> Iterator[Tiles]:
    """The base layouts, then each single tile (or global view) switched to each other named layout, then
    (where there are global views) every operand switched together, as transfers want matching layouts."""
    yield base
    for name, t in base.items():
        if isinstance(t, GlobalDesc):
            for view in views.layout_variants(db.isa, t):
                yield {**base, name: view}
            continue
        if not isinstance(t, TileDesc):
            continue
        for lay in db.isa.layouts.values():
            if (lay.blayout, lay.slayout) != (t.blayout, t.slayout):
                yield {**base, name: t.with_(blayout=lay.blayout, slayout=lay.slayout)}
    if any(isinstance(t, GlobalDesc) for t in base.values()):
        for lay in db.isa.layouts.values():
            if lay.name in db.isa.global_layouts and lay.name != "ND":
                joint = {}
                for name, t in base.items():
                    if isinstance(t, GlobalDesc):
                        joint[name] = next((v for v in views.layout_variants(db.isa, t) if v.layout == lay.name), t)
                    elif isinstance(t, TileDesc):
                        joint[name] = t.with_(blayout=lay.blayout, slayout=lay.slayout)
                    else:
                        joint[name] = t
                yield joint
    for name in pads:
        t = base[name]
        for pad in db.isa.pad_values:
            if isinstance(t, TileDesc) and pad != t.pad:
                yield {**base, name: t.with_(pad=pad)}


def describe(tiles: Tiles, db: Database) -> dict[str, str]:
    return {n: format_descriptor(t, db.isa) for n, t in tiles.items()}


def short_id(mode: Mode, tiles: Tiles, binding: dict[str, str]) -> str:
    """Readable id part: dtypes, then the first input's shape and valid region and layout."""
    types = ",".join(f"{v}={attrs.spell_value(d)}" for v, d in binding.items())
    first = next((t for o in mode.operands if o.role == "in" for t in [tiles[o.name]] if isinstance(t, TileDesc)),
                 None) or next((t for t in tiles.values() if isinstance(t, TileDesc)), None)
    shape = ""
    if first is not None:
        shape = f"-{first.rows}x{first.cols}v{first.valid_row}x{first.valid_col}"
    lays = "".join(views.short_id(t) if isinstance(t, GlobalDesc) else "d" if t.blayout == "ColMajor" else "n"
                   for t in tiles.values() if isinstance(t, TileDesc | GlobalDesc))
    return f"{types}{shape}-{lays}"



# ---------------------------------------------------------------- which fields a rule reads


def _touches(reads: frozenset[Read], changed: frozenset[Read]) -> bool:
    return any((o, f) in reads or (o, ANY) in reads for o, f in changed)


PHYSICAL_FIELDS = frozenset({"rows", "cols", ANY})


def _physical(db: Database, op: OpSpec, mode: Mode, rid: str) -> frozenset[str]:
    """Which of the physical dimensions (rows, cols, or ``ANY``) rule ``rid`` reads."""
    memo = _search(db).physical
    key = (op.name, mode.name, rid)
    found = memo.get(key)
    if found is None:
        reads = rule_reads(db, op, mode).get(rid)
        if reads is None:
            found = frozenset() if rid.startswith(("profile.", "invocation.")) else frozenset({ANY})
        else:
            found = frozenset(f for _, f in reads) & PHYSICAL_FIELDS
        memo[key] = found
    return found


def _physical_rules(db: Database, op: OpSpec, mode: Mode, profile: str) -> tuple[Rule, ...]:
    """The rules of ``mode`` on ``profile`` that read a tile's physical rows or cols (one tuple per mode and
    profile: the validator remembers outcomes per list of rules)."""
    memo = _search(db).physical_rules
    key = (op.name, mode.name, profile)
    found = memo.get(key)
    if found is None:
        found = memo[key] = tuple(r for r in rules_for(op, mode.name, profile) if _physical(db, op, mode, r.id))
    return found


def _fixed_violations(db: Database, op: OpSpec, mode: Mode, report: Report) -> set[str] | None:
    """Rule ids of ``report`` whose verdict no change of the tiles' physical rows and cols can alter
    (None: the report has deferred checks)."""
    if report.deferred:
        return None
    return {r for r in report.rule_ids if not _physical(db, op, mode, r)}


def _legality_blocked(db: Database, op: OpSpec, mode: Mode, report: Report) -> tuple[bool, bool, bool]:
    """For a configuration that must become legal: (no rounding helps, no configuration with this row
    rounding is legal, no configuration with this column rounding is legal)."""
    if report.deferred:
        return True, False, False
    row_bad = col_bad = False
    for rid in report.rule_ids:
        physical = _physical(db, op, mode, rid)
        if not physical:
            return True, False, False
        row_bad |= physical == {"rows"}
        col_bad |= physical == {"cols"}
    return False, row_bad, col_bad


@dataclass
class _Search:
    """What the case search remembers about one database.  The rounding hints steer the search, so
    ``unit_cases`` starts each mode and profile with fresh hints (and what depends on them) for
    byte-identical output."""

    db: Database
    configs: dict[tuple, Tiles | None] = field(default_factory=dict)
    hints: dict[tuple, list[tuple[int, int]]] = field(default_factory=dict)
    feasible: dict[tuple, bool] = field(default_factory=dict)
    legal: set[tuple] = field(default_factory=set)  # (op, mode, profile, binding) with a legal configuration found
    descriptors: dict[str, TileDesc | ScalarDesc | AttrDesc] = field(default_factory=dict)
    failing: dict[tuple[TileDesc, str], frozenset[str]] = field(default_factory=dict)
    by_size: dict[tuple, tuple[tuple[Rule, ...], bool]] = field(default_factory=dict)  # see _typed_by_size
    size_names: dict[str, str] = field(default_factory=dict)  # dtype -> "bytes:bits" (see _screened)
    mutation_dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # see _mutation_dtypes
    mutations: dict[tuple, list] = field(default_factory=dict)  # see _operand_mutations
    spaces: dict[tuple[str, str], list] = field(default_factory=dict)  # see variant_space
    physical: dict[tuple[str, str, str], frozenset[str]] = field(default_factory=dict)  # see _physical
    physical_rules: dict[tuple[str, str, str], tuple[Rule, ...]] = field(default_factory=dict)  # _physical_rules
    variants: dict[tuple, list[Tiles]] = field(default_factory=dict)  # (op, mode, binding) -> base_variants
    hopeless: set[tuple] = field(default_factory=set)  # configurations no binding of those sizes can have
    screens: dict[tuple, frozenset[str] | None] = field(default_factory=dict)

    def restart(self) -> None:
        for memo in (self.configs, self.hints, self.feasible, self.legal, self.hopeless, self.variants):
            memo.clear()


_SEARCH: list[_Search] = []  # the last database's search state (one slot: databases are not kept alive)


def _search(db: Database) -> _Search:
    if not _SEARCH or _SEARCH[0].db is not db:
        _SEARCH[:] = [_Search(db)]
    return _SEARCH[0]


def configurations(
    db: Database, op: OpSpec, mode: Mode, profile: str, binding: dict[str, str],
    target: tuple[int, int], partial: bool, layout: int,
) -> Tiles | None:
    """A legal configuration for one dtype binding and one shape/layout variant, or None."""
    state = _search(db)
    exact = (op.name, mode.name, profile, target, partial, layout, tuple(binding.items()))
    if exact in state.configs:
        return state.configs[exact]
    sizes = tuple(db.isa.dtypes[d].bits if d in db.isa.dtypes else d for d in binding.values())
    # Where every check reads element types only through their sizes, a binding whose types have the sizes
    # of one that found no legal rounding here gets the same verdict at every rounding: none either.
    twins = (op.name, mode.name, profile, target, partial, layout, _size_key(db, mode, binding)) \
        if _typed_by_size(db, op, mode, profile) else None
    if twins is not None and twins in state.hopeless:
        state.configs[exact] = None
        return None
    vkey = (op.name, mode.name, tuple(binding.items()))
    variants = state.variants.get(vkey)
    if variants is None:
        variants = state.variants[vkey] = base_variants(db, mode, binding)
    found = None
    if layout < len(variants):
        hint = state.hints.setdefault((op.name, mode.name, profile, target, partial, layout, sizes), [])
        found = reshape(db, op, mode, profile, variants[layout], target, partial, legal, hint,
                        lambda op, report: _legality_blocked(db, op, mode, report), screened=True)
    state.configs[exact] = found
    if found is not None:
        state.legal.add((op.name, mode.name, profile, tuple(sorted(binding.items()))))
    if found is None and twins is not None and _in_table(op, mode, profile, binding):
        state.hopeless.add(twins)
    return found


def _in_table(op: OpSpec, mode: Mode, profile: str, binding: dict[str, str]) -> bool:
    """Whether a row of the profile's dtype table admits the binding's types (its twins' then too)."""
    table = op.dtypes.get(profile)
    return table is not None and any(
        mode.name in row.modes and all(binding[v] in row.types[v] for v in mode.type_vars) for row in table.rows)


def _typed_by_size(db: Database, op: OpSpec, mode: Mode, profile: str, rules: tuple[Rule, ...] | None = None) -> bool:
    """Whether ``rules`` (default: every rule of ``mode`` on ``profile``), the op's ``let`` values and the tile
    rules read element types only through their sizes, on tiles alone (no global view: a view's layouts
    follow its element type)."""
    rules = rules_for(op, mode.name, profile) if rules is None else rules
    memo = _search(db).by_size
    key = (op.name, mode.name, profile, id(rules))  # the lists of rules searches pass are kept: see _physical_rules
    found = memo.get(key)
    if found is None or found[0] is not rules:
        nodes = [n for r in (*rules, *db.isa.tile_rules) for n in (r.check, r.when, *(x for _, x, _ in r.let))
                 if n is not None] + [node for _, node, _ in op.let]
        found = memo[key] = (rules, not any(o.is_global for o in mode.operands) and sizes_only(
            nodes, mode.type_vars, {o.name for o in mode.operands if not o.is_attr}))
    return found[1]


def _size_key(db: Database, mode: Mode, binding: dict[str, str]) -> tuple:
    """A binding with each type variable's type reduced to its (bytes, bits) and each attribute's value kept
    (with its Python type: True is not 1)."""
    dtypes = db.isa.dtypes
    return tuple((dtypes[binding[v]].bytes, dtypes[binding[v]].bits) if v in mode.type_vars
                 else (type(binding[v]).__name__, binding[v]) for v in binding)


def _screened(db: Database, op: OpSpec, mode: Mode, profile: str, tiles: Tiles,
              screen: tuple[Rule, ...]) -> frozenset[str] | None:
    """``failing_rules`` of ``screen``, remembered per operands with their element types reduced to sizes
    when every expression involved reads types only through sizes (TRESHAPE's byte-count rule fails alike
    for every pair of types of different sizes)."""
    state = _search(db)
    if not _typed_by_size(db, op, mode, profile, screen):
        return failing_rules(db, op, mode, profile, tiles, screen)
    sizes = state.size_names
    if not sizes:
        sizes.update((d, f"{dt.bytes}:{dt.bits}") for d, dt in db.isa.dtypes.items())
    key = (op.name, mode.name, profile, id(screen), tuple([  # screens are kept (_physical_rules): one id each
        (n, t.with_(dtype=sizes.get(t.dtype, t.dtype)) if isinstance(t, TileDesc)
         else ("scalar", sizes.get(t.dtype, t.dtype)) if isinstance(t, ScalarDesc) else t) for n, t in tiles.items()]))
    if key not in state.screens:
        state.screens[key] = failing_rules(db, op, mode, profile, tiles, screen)
    return state.screens[key]


# Ranges of the valid regions property tests draw.
PROPERTY_ROWS = (1, 24)
PROPERTY_COLS = (1, 80)


def _nearest(value: int, bounds: tuple[int, int]) -> Iterator[int]:
    """``value``, then the other values of ``bounds`` by distance (the smaller first)."""
    lo, hi = bounds
    for d in range(hi - lo + 1):
        for v in (value - d, value + d) if d else (value,):
            if lo <= v <= hi:
                yield v


def legal_configuration(
    db: Database, op: OpSpec, mode: Mode, profile: str, binding: dict[str, str],
    target: tuple[int, int], partial: bool, layout: int,
) -> Tiles | None:
    """The legal configuration nearest to a drawn one, so that property tests draw legal configurations
    directly.  The drawn layout variant and partial flag come first, then the other flag, then the base
    layouts: the first of these legal at ``target``; else, the first that is legal at its example target,
    with the nearest column count, then the nearest row count (within ``PROPERTY_ROWS`` x ``PROPERTY_COLS``),
    else at that example target; else the first legal variant of the binding.  None only when the
    binding is not ``feasible``."""
    def at(t: tuple[int, int], p: bool, lay: int) -> Tiles | None:
        return configurations(db, op, mode, profile, binding, t, p, lay)

    options = list(dict.fromkeys([(partial, layout), (not partial, layout), (partial, 0), (not partial, 0)]))
    for p, lay in options:
        if (tiles := at(target, p, lay)) is not None:
            return tiles
    own = example_target(example_tiles(db, mode), mode.fixed_tiles)
    rows, cols = target
    for p, lay in options:
        if at(own, p, lay) is not None:
            near = [*((rows, c) for c in _nearest(cols, PROPERTY_COLS)),
                    *((r, cols) for r in _nearest(rows, PROPERTY_ROWS))]
            return next((tiles for t in near if (tiles := at(t, p, lay)) is not None), at(own, p, lay))
    return next((tiles for t, p, lay in variant_space(db, op, mode) if (tiles := at(t, p, lay)) is not None), None)


def variant_space(db: Database, op: OpSpec, mode: Mode) -> list[tuple[tuple[int, int], bool, int]]:
    """(valid-region target, partial, layout variant) triples; a further base starts at its own valid
    region, packed and partial (its view may fit no other target), then its variants follow the example's."""
    memo = _search(db).spaces
    if (op.name, mode.name) not in memo:
        memo[op.name, mode.name] = _variant_space(db, mode)
    return memo[op.name, mode.name]


def _variant_space(db: Database, mode: Mode) -> list[tuple[tuple[int, int], bool, int]]:
    bases = base_tiles(db, mode)
    space: list[tuple[tuple[int, int], bool, int]] = [(example_target(bases[0], mode.fixed_tiles), True, 0)]
    for i, target in enumerate(TARGETS):
        space.append((target, i % 2 == 0, 0))
    lay = 0
    for k, base in enumerate(bases):
        for v in range(len(list(layout_variants(db, base, pad_readers(mode))))):
            if k and not v:
                space.extend([(example_target(base, mode.fixed_tiles), True, lay),
                              (example_target(base, mode.fixed_tiles), False, lay)])
            elif lay:
                space.append((TARGETS[(lay * 3) % len(TARGETS)], lay % 2 == 1, lay))
            lay += 1
    return space


def positive_cases(db: Database, op: OpSpec, units: Collection[tuple[str, str]] | None = None,
                   idents: list[str] | None = None) -> list[Case]:
    """Every mode x profile x legal dtype binding, over a rotating spread of shapes, layouts and patterns
    (only the (mode, profile) pairs of ``units``, when given).  ``idents``, when given, receives the text each
    case's seed is made from (after the op's name), in the order of the cases."""
    cases: list[Case] = []
    seen: set[str] = set()
    patterns = ["random", "edge"] + (["ties"] if op.numerics.ties in ("first", "stable") else [])

    def add(mode: Mode, profile: str, binding: dict[str, str], variant_index: int, pattern: str) -> bool:
        space = variant_space(db, op, mode)
        for step in range(len(space)):
            target, partial, layout = space[(variant_index + step) % len(space)]
            tiles = configurations(db, op, mode, profile, binding, target, partial, layout)
            if tiles is None:
                continue
            ident = f"{mode.name}-{profile}-{short_id(mode, tiles, binding)}-{pattern}"
            if ident in seen:
                continue
            seen.add(ident)
            if idents is not None:
                idents.append(ident)
            cases.append(Case(op.name, mode.name, profile, describe(tiles, db), positive_seed(op.name, ident),
                              pattern))
            return True
        return False

    for mode in op.modes:
        space = variant_space(db, op, mode)
        for profile in db.isa.profiles:
            if units is not None and (mode.name, profile) not in units:
                continue
            combos = dtype_combos(db, op, mode, profile)
            counter = 0
            for binding in combos:
                add(mode, profile, binding, counter % len(space), patterns[counter % len(patterns)])
                counter += 1
            if profile in op.numerics.exact_specials:  # NaN, infinities and signed zeros, per float binding
                for k, binding in enumerate(combos):
                    if any(db.isa.dtypes[d].is_float for d in binding.values() if d in db.isa.dtypes):
                        add(mode, profile, binding, k % len(space), "ieee")
            # make sure every shape/layout variant is exercised at least once per mode and profile
            for vi in range(len(space)):
                if combos and counter < len(space):
                    add(mode, profile, combos[vi % len(combos)], vi, "random")
    return cases


def case_id(case: Case, db: Database) -> str:
    op = db.op(case.op)
    mode = op.mode(case.mode)
    tiles = case.parsed(db)
    binding: dict[str, str] = {}
    for o in mode.operands:
        if o.is_attr:
            binding[o.name] = tiles[o.name].value
        else:
            binding.setdefault(o.dtype, tiles[o.name].dtype)
    prefix = f"{case.mode}-{case.profile}-"
    if case.reject:
        return f"{prefix}{case.reject}-{short_id(mode, tiles, binding)}"
    return f"{prefix}{short_id(mode, tiles, binding)}-{case.pattern}"


# ---------------------------------------------------------------- must-reject cases


Change = dict[str, dict[str, object]]  # operand -> descriptor field -> new value


Mutation = tuple[Change, bool, frozenset[Read], frozenset[str] | None, Tiles | None]
# (the change, whether reshaping may help, the (operand, field) pairs it really changes, the tile rules its one
# changed tile breaks on the profile, the changed operand changed: None where those are judged on the changed
# operands themselves)


def _mutations(db: Database, op: OpSpec, mode: Mode, profile: str, tiles: Tiles) -> Iterator[Mutation]:
    """Single-attribute mutations of a legal configuration, in a fixed order (see ``Mutation``)."""
    dtypes = _mutation_dtypes(db, op)
    for var in mode.type_vars:
        users = [o.name for o in mode.operands if o.dtype == var]
        for d in dtypes:
            if d != tiles[users[0]].dtype:
                yield _judged(tiles, {u: {"dtype": d} for u in users}, True)
    for a in mode.attrs:
        # a range's ends too: a rule on the attribute's value (a flag number, a slot size) may forbid them
        ends = tuple(v for v in (a.attr_range or ()) if v not in a.attr_values)
        for value in (*attrs.sample_values(db.isa, a), *ends):
            if value != tiles[a.name].value or type(value) is not type(tiles[a.name].value):
                yield _judged(tiles, {a.name: {"value": value}}, False)
    for o in mode.operands:
        if not o.is_attr:
            yield from _operand_mutations(db, profile, o.name, tiles[o.name], dtypes, "dtype")
    for o in mode.operands:
        t = tiles[o.name]
        if isinstance(t, GlobalDesc):
            for view in views.mutations(db.isa, t):
                yield _judged(tiles, {o.name: {f: getattr(view, f) for f in views.FIELDS
                                               if getattr(view, f) != getattr(t, f)}}, False)
        elif isinstance(t, TileDesc):
            yield from _operand_mutations(db, profile, o.name, t, dtypes, "shape")


def _mutation_dtypes(db: Database, op: OpSpec) -> tuple[str, ...]:
    """The element types mutations try: a packed type (two values per byte) only for an op whose tables
    name one."""
    memo = _search(db).mutation_dtypes
    if op.name not in memo:
        named = {d for table in op.dtypes.values() for row in table.rows for ds in row.types.values() for d in ds}
        memo[op.name] = tuple(d for d, dt in db.isa.dtypes.items() if dt.per_byte == 1 or d in named)
    return memo[op.name]


def _judged(tiles: Tiles, change: Change, may_reshape: bool) -> Mutation:
    return change, may_reshape, _changed_fields(tiles, change), None, None


def _operand_mutations(db: Database, profile: str, name: str, t: TileDesc | ScalarDesc | GlobalDesc,
                       dtypes: tuple[str, ...], part: str) -> list[Mutation]:
    """The mutations of one operand: its element type (``part`` "dtype") or its tile fields ("shape").  They
    depend on nothing else, so they are remembered (elementwise ops share their example operands)."""
    memo = _search(db).mutations
    key = (name, t, profile, dtypes, part)
    found = memo.get(key)
    if found is not None:
        return found
    if len(memo) >= _MUTATIONS_MAX:
        memo.clear()
    if part == "dtype":
        changes = [({"dtype": d}, True) for d in dtypes if d != t.dtype]
    else:
        assert isinstance(t, TileDesc)
        changes = list(_tile_changes(db, t))
    found = []
    for fields, may_reshape in changes:
        change = {name: fields}
        changed = _changed_fields({name: t}, change)
        touched = _changed({name: t}, change)
        fails = _failing_tile_rules(db, touched[name], profile) if isinstance(t, TileDesc) else (
            frozenset() if isinstance(t, ScalarDesc) else None)
        found.append((change, may_reshape, changed, fails, touched))
    memo[key] = found
    return found


_MUTATIONS_MAX = 20_000  # remembered operands (each with about fifty mutations)


def _tile_changes(db: Database, t: TileDesc) -> Iterator[tuple[dict[str, object], bool]]:
    """Changes of one field group of a tile: location, layouts, valid and physical extents, fractal size."""
    for loc in db.isa.tile_types:
        if loc != t.loc:
            yield {"loc": loc}, False
    for bl in db.isa.blayouts:
        for sl in db.isa.slayouts:
            if (bl, sl) != (t.blayout, t.slayout):
                yield {"blayout": bl, "slayout": sl}, True
    for vr in (0, 1, 2, t.valid_row - 1, t.valid_row + 1):
        if vr >= 0 and vr != t.valid_row:
            yield {"valid_row": vr}, False
            yield {"valid_row": vr, "rows": max(t.rows, vr)}, False
    for vc in (0, 1, 2, t.valid_col - 1, t.valid_col + 1):
        if vc >= 0 and vc != t.valid_col:
            yield {"valid_col": vc}, False
            yield {"valid_col": vc, "cols": max(t.cols, vc)}, False
    for k in range(0, 9):
        size = 1 << k
        if size != t.cols:
            yield {"cols": size, "valid_col": min(t.valid_col, size)}, False
        if size != t.rows:
            yield {"rows": size, "valid_row": min(t.valid_row, size)}, False
    yield {"fractal": 64}, False


def _changed(tiles: Tiles, change: Change) -> Tiles:
    """The operands ``change`` touches, changed."""
    out: Tiles = {}
    for name, fields in change.items():
        t = tiles[name]
        if isinstance(t, TileDesc | GlobalDesc):
            out[name] = t.with_(**fields)
        elif isinstance(t, ScalarDesc):
            out[name] = ScalarDesc(str(fields["dtype"]))
        else:
            out[name] = AttrDesc(fields["value"])  # type: ignore[arg-type]
    return out


def _changed_fields(tiles: Tiles, change: Change) -> frozenset[Read]:
    """Every (operand, field) ``change`` really changes."""
    return frozenset((name, read) for name, fields in change.items() for f, v in fields.items()
                     if getattr(tiles[name], f) != v
                     for read in (views.FIELD_READS.get(f, (f,)) if isinstance(tiles[name], GlobalDesc) else (f,)))


def _reshape_mutant(db: Database, op: OpSpec, mode: Mode, profile: str, mutant: Tiles,
                    target: tuple[int, int]) -> Tiles | None:
    def single(report: Report) -> bool:
        return len(report.rule_ids) == 1 and not report.deferred and not any(
            r.startswith("tile.") for r in report.rule_ids)

    def blocked(op: OpSpec, report: Report) -> tuple[bool, bool, bool]:
        fixed = _fixed_violations(db, op, mode, report)
        return fixed is None or len(fixed) > 1 or any(r.startswith("tile.") for r in fixed), False, False

    return reshape(db, op, mode, profile, mutant, target, True, single, blocked=blocked)


def reportable(db: Database, op: OpSpec, mode: Mode, profile: str) -> list[str]:
    """Rule ids ``validate`` can report for a well-formed invocation of ``mode`` on ``profile``."""
    ids = [r.id for r in op.rules if mode.name in r.modes and profile in r.profiles]
    ids += [r.id for r in db.isa.tile_rules]
    if any(o.is_global for o in mode.operands):
        ids += [r.id for r in db.isa.global_rules]
    ids += [f"dtype.{v.lower()}" for v in mode.type_vars]
    ids += [f"dtype.same-{v.lower()}" for v in mode.type_vars if sum(o.dtype == v for o in mode.operands) > 1]
    return list(dict.fromkeys(ids))


RESHAPE_TRIES = 2  # reshape searches per rule, mode and profile before the rule is left without a case


def reject_cases(db: Database, op: OpSpec, positives: list[Case],
                 units: Collection[tuple[str, str]] | None = None) -> list[Case]:
    """For every rule reachable from a legal configuration, one mutation that breaks exactly that rule (only
    for the (mode, profile) pairs of ``units``, when given)."""
    cases: list[Case] = []
    for mode in op.modes:
        for profile in db.isa.profiles:
            if units is not None and (mode.name, profile) not in units:
                continue
            picked = _reject_bases(db, [c for c in positives if c.mode == mode.name and c.profile == profile])
            found: dict[str, Tiles] = {}
            reads = {rid: rule_reads(db, op, mode)[rid] for rid in reportable(db, op, mode, profile)}
            tile_ids = {r.id for r in db.isa.tile_rules}
            open_ids: dict[frozenset[str], set[str]] = {}  # changed fields -> rules that could add a case
            still_open: dict[frozenset[str], tuple[int, set[str]]] = {}  # those not found yet (at len(found))
            reshaped: dict[str, int] = {}  # rule -> reshape searches tried for it (each costs hundreds of checks)
            screens: dict[frozenset[Read], tuple[Rule, ...]] = {}  # changed fields -> the op rules reading them
            for base_case in picked:
                tiles = base_case.parsed(db)
                target = example_target(tiles, mode.fixed_tiles)
                for change, may_reshape, changed, tile_fails, touched in _mutations(db, op, mode, profile, tiles):
                    # the base is legal, so only rules reading a changed field can fail: skip the mutation
                    # when none of those can still add a case (tile rules: judged on the changed tiles)
                    entry = still_open.get(changed)
                    if entry is None or entry[0] != len(found):  # found only grows
                        if changed not in open_ids:
                            open_ids[changed] = {rid for rid, r in reads.items() if _touches(r, changed)}
                        entry = still_open[changed] = (len(found), open_ids[changed] - found.keys())
                    candidates = entry[1]
                    if not candidates:
                        continue
                    if touched is None:
                        touched = _changed(tiles, change)
                    if candidates <= tile_ids:
                        if tile_fails is None:
                            tile_fails = frozenset().union(*(_failing_tile_rules(db, t, profile)
                                                             for t in touched.values() if isinstance(t, TileDesc)))
                        if not candidates & tile_fails:
                            continue
                    mutant = {**tiles, **touched}
                    ids = None
                    if all(f != "value" for _, f in changed):
                        # the base is legal and no attribute changed: the rules that read a changed field
                        # decide, with the element-type checks where a type changed
                        if changed not in screens:
                            screens[changed] = tuple(r for r in rules_for(op, mode.name, profile)
                                                     if r.id in open_ids[changed])
                        ids = failing_rules(db, op, mode, profile, mutant, screens[changed],
                                            [n for n in tiles if n not in touched])  # the base is legal
                        if ids is not None and any(f == "dtype" for _, f in changed):
                            ids |= {v.rule for v in type_violations(db, op, mode, profile, mutant)}
                    if ids is None:
                        report = check(db, op, mode, profile, mutant)
                        if report.deferred:
                            continue
                        ids = report.rule_ids
                    if len(ids) == 1:
                        rid = next(iter(ids))
                        if rid not in found and not rid.startswith("invocation."):
                            found[rid] = mutant
                        continue
                    non_tile = {r for r in ids if not r.startswith("tile.")}
                    rid = next(iter(non_tile)) if len(non_tile) == 1 else None
                    if may_reshape and rid is not None and rid not in found and reshaped.get(rid, 0) < RESHAPE_TRIES:
                        reshaped[rid] = reshaped.get(rid, 0) + 1
                        reshaped_mutant = _reshape_mutant(db, op, mode, profile, mutant, target)
                        if reshaped_mutant is not None:
                            found[rid] = reshaped_mutant
            for rid in sorted(found):
                tiles = found[rid]
                cases.append(Case(op.name, mode.name, profile, describe(tiles, db),
                                  reject_seed(op.name, mode.name, profile, rid), "random", rid))
    return cases


def _reject_bases(db: Database, bases: list[Case]) -> list[Case]:
    """A few legal starting points for the mutations: the first case of each distinct dtype binding row (up
    to six), then shapes spread over the rest."""
    picked: list[Case] = []
    seen_types: set[tuple[str, ...]] = set()
    for c in bases:
        key = tuple(sorted({d.dtype for d in c.parsed(db).values() if d.dtype}))
        if key not in seen_types and len(picked) < 6:
            seen_types.add(key)
            picked.append(c)
    picked.extend(c for c in bases[:: max(1, len(bases) // 6)] if c not in picked)
    return picked


def _failing_tile_rules(db: Database, tile: TileDesc, profile: str) -> frozenset[str]:
    """Ids of the tile rules ``tile`` breaks on ``profile`` (remembered)."""
    memo = _search(db).failing
    found = memo.get((tile, profile))
    if found is None:
        found = memo[tile, profile] = frozenset(rule.id for rule, verdict in tile_verdicts(db, tile, profile)
                                                 if verdict is False)
    return found


def expected_rule_ids(db: Database, op: OpSpec) -> dict[str, set[tuple[str, str]]]:
    """Every rule id an op can report -> the (mode, profile) pairs where it applies."""
    out: dict[str, set[tuple[str, str]]] = {}
    for mode in op.modes:
        for profile in db.isa.profiles:
            ids = [r.id for r in op.rules if mode.name in r.modes and profile in r.profiles]
            ids += [f"dtype.{v.lower()}" for v in mode.type_vars]
            ids += [r.id for r in db.isa.tile_rules]
            if any(o.is_global for o in mode.operands):
                ids += [r.id for r in db.isa.global_rules]
            for rid in ids:
                out.setdefault(rid, set()).add((mode.name, profile))
    return out


def uncovered_rules(db: Database, op: OpSpec, rejects: list[Case]) -> list[str]:
    """Rule ids (op rules, dtype variables, tile rules) with no must-reject case in any mode/profile."""
    covered = {c.reject for c in rejects}
    return sorted(rid for rid in expected_rule_ids(db, op) if rid not in covered)


def property_bindings(db: Database, op: OpSpec, mode: str, profile: str) -> list[dict[str, Any]]:
    """The dtype and attribute bindings a property test of ``mode`` on ``profile`` draws from: those of
    ``dtype_combos`` that are ``feasible``, in table order (written into the generated module, so a test
    run does not search for them again)."""
    m = op.mode(mode)
    return [b for b in dtype_combos(db, op, m, profile) if feasible(db, op, m, profile, b)]


def case_units(db: Database, op: OpSpec) -> list[tuple[str, str]]:
    """The (mode, profile) pairs whose cases are searched apart, in the order their cases are listed."""
    return [(mode.name, profile) for mode in op.modes for profile in db.isa.profiles]


def unit_cases(db: Database, op: OpSpec, mode: str, profile: str) -> tuple[list[Case], list[Case]]:
    """The positive and must-reject cases of one mode on one profile.  Every search memo is keyed by mode
    and profile, so a unit's cases are the same whether it is searched alone (in a worker process) or
    after others."""
    positives, rejects, _idents = unit_search(db, op, mode, profile)
    return positives, rejects


def unit_search(db: Database, op: OpSpec, mode: str, profile: str) -> tuple[list[Case], list[Case], list[str]]:
    """``unit_cases``, with the texts the positive cases' seeds are made from (for ``renamed``)."""
    _search(db).restart()
    unit = {(mode, profile)}
    idents: list[str] = []
    positives = positive_cases(db, op, unit, idents)
    return positives, reject_cases(db, op, positives, unit), idents


def search_signature(db: Database, op: OpSpec, mode_name: str, profile: str) -> str:
    """Everything the case search of one mode on one profile reads of the op, but its name: the mode's operands,
    bases and case shapes, the op's ``let`` values, rules and dtype tables, the numerics the patterns follow.
    Texts, messages and sources are left out (the search reads rule ids only).  Two units with one signature
    get the same cases, but for the op's name and the seeds made from it (``renamed``): ops of one kind
    often share everything else."""
    mode = op.mode(mode_name)
    table = op.dtypes.get(profile)
    return repr((
        mode.name, profile,
        tuple(repr(replace(o, text=None, usage=None)) for o in mode.operands),
        tuple((ex.profile, tuple(ex.tiles.items())) for ex in mode.examples),
        repr(mode.shapes), pad_readers(mode), mode.reads_state,
        None if table is None else tuple((row.modes, tuple(row.types.items())) for row in table.rows),
        _op_signature(op), profile in op.numerics.exact_specials,
    ))


_OP_SIGNATURES: dict[int, tuple[OpSpec, str]] = {}  # id(op) -> (op, its part of search_signature)


def _op_signature(op: OpSpec) -> str:
    """What every unit's search reads of the op as a whole: the element types its tables name, its rules and
    ``let`` values, how it breaks ties."""
    entry = _OP_SIGNATURES.get(id(op))
    if entry is None or entry[0] is not op:
        if len(_OP_SIGNATURES) >= 10_000:
            _OP_SIGNATURES.clear()
        named = sorted({d for t in op.dtypes.values() for row in t.rows for ds in row.types.values() for d in ds})
        entry = _OP_SIGNATURES[id(op)] = (op, repr((
            named,
            tuple((r.id, r.kind, r.operands, r.allow, repr(r.check), repr(r.when),
                   tuple((n, repr(x)) for n, x, _ in r.let), r.profiles, r.modes, r.phase) for r in op.rules),
            tuple((n, repr(x)) for n, x, _ in op.let), op.numerics.ties)))
    return entry[1]


def renamed(op_name: str, positives: list[Case], rejects: list[Case],
            idents: list[str]) -> tuple[list[Case], list[Case]]:
    """The cases ``unit_search`` found for another op with the same ``search_signature``, as the cases of
    ``op_name``: its name, and the seeds made from it."""
    return ([replace(c, op=op_name, seed=positive_seed(op_name, ident)) for c, ident in zip(positives, idents,
                                                                                          strict=True)],
            [replace(c, op=op_name, seed=reject_seed(op_name, c.mode, c.profile, c.reject)) for c in rejects])


def positive_seed(op_name: str, ident: str) -> int:
    """A positive case's seed: from its op and its ident (mode, profile, shapes, binding, pattern)."""
    return seed_of(f"{op_name}-{ident}")


def reject_seed(op_name: str, mode: str, profile: str, rule: str) -> int:
    """A must-reject case's seed: from its op, mode, profile and the rule it breaks."""
    return seed_of(f"{op_name}-{mode}-{profile}-reject-{rule}")


def all_cases(db: Database, op: OpSpec) -> tuple[list[Case], list[Case]]:
    positives: list[Case] = []
    rejects: list[Case] = []
    for mode, profile in case_units(db, op):
        pos, rej = unit_cases(db, op, mode, profile)
        positives += pos
        rejects += rej
    return positives, rejects
