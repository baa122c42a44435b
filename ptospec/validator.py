"""Is this invocation legal on profile P?  Derived entirely from the spec.

Given an op, a mode, a profile and concrete operand descriptors, ``validate``
returns every violation with a stable rule id, the operands it concerns, and a
sentence a kernel writer understands.  Checks that need a value only known at
run time (``valid=?x?``) are reported as *deferred*, not as violations.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from operator import attrgetter

from . import attrs
from .errors import ExprError, InvocationError, PtospecError, UnknownValue
from .expr.ast import Attr, Binary, Call, Index, Name, Node, Num, children, walk
from .expr.evaluate import Scope, bind_lets, evaluate
from .model import Database, Mode, OpSpec, Rule
from .reads import ANY, expression_reads, rule_reads
from .tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc


@dataclass(frozen=True)
class Violation:
    rule: str
    operands: tuple[str, ...]
    message: str
    phase: str  # static | runtime | invocation
    spec: str = ""  # file:line of the rule in the spec, for maintainers

    def one_line(self) -> str:
        ops = f" ({', '.join(self.operands)})" if self.operands else ""
        return f"[{self.rule}]{ops} {self.message}"


@dataclass(frozen=True)
class Report:
    op: str
    mode: str
    profile: str
    violations: tuple[Violation, ...]
    deferred: tuple[str, ...]
    implied: tuple[str, ...] = ()  # rules left to the implementation: they concern operands the form omits
    unchecked: tuple[str, ...] = ()  # rules reading configuration registers not given (checked when they are)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def rule_ids(self) -> set[str]:
        return {v.rule for v in self.violations}


def resolve(db: Database, op_name: str, mode: str | None, profile: str, operands=None) -> tuple[OpSpec, Mode]:
    """Look up op, mode and profile, with one clear error for each unknown name."""
    if not isinstance(op_name, str) or not isinstance(profile, str) or not isinstance(mode, str | None):
        raise InvocationError("op, mode and profile are names (text)", rule="invocation.op")
    key = op_name.lower().removeprefix("pto.")
    if key not in db.ops:
        close = [n for n in db.ops if n.startswith(key[:4])][:5]
        hint = f"; similar: {', '.join(close)}" if close else ""
        raise InvocationError(f"unknown op {op_name!r}{hint}", rule="invocation.op")
    op = db.ops[key]
    if profile not in db.isa.profiles:
        raise InvocationError(
            f"unknown profile {profile!r} (known: {', '.join(db.isa.profiles)})", rule="invocation.profile"
        )
    if mode is None:
        if len(op.modes) == 1:
            return op, op.modes[0]
        if operands is not None:
            matches = [m for m in op.modes if {o.name for o in m.operands} == set(operands)]
            if len(matches) > 1:  # modes with the same operands (TMOV's paths): the tile locations tell;
                # where none fits, the first is taken, so that its location rules report why
                # (on another profile: that mode's location rule for this one says why not)
                matches = ([m for m in matches if _locations_fit(op, m, profile, operands)]
                           or [m for m in matches if any(_locations_fit(op, m, p, operands) for p in db.isa.profiles)
                               ][:1] or matches[:1])
            if len(matches) == 1:
                return op, matches[0]
            if not matches and operands:
                raise InvocationError(_no_mode_fits(op, set(operands)), rule="invocation.mode")
        raise InvocationError(
            f"{op.name} has several modes ({', '.join(m.name for m in op.modes)}); choose one with --mode",
            rule="invocation.mode",
        )
    try:
        return op, op.mode(mode)
    except KeyError:
        raise InvocationError(
            f"{op.name} has no mode {mode!r} (modes: {', '.join(m.name for m in op.modes)})", rule="invocation.mode"
        ) from None


def _no_mode_fits(op: OpSpec, given: set[str]) -> str:
    """Why no mode takes exactly the operands given: the unknown names, or what each mode that takes them all
    still needs."""
    known = {o.name for m in op.modes for o in m.operands}
    unknown = sorted(given - known)
    if unknown:
        return (f"{op.name} has no operand {', '.join(unknown)} (its modes take: "
                + "; ".join(f"{m.name}: {', '.join(o.name for o in m.operands)}" for m in op.modes) + ")")
    needs = [(m.name, [o.name for o in m.operands if o.name not in given]) for m in op.modes
             if given <= {o.name for o in m.operands}]
    if not needs:
        return (f"no mode of {op.name} takes all of {', '.join(sorted(given))} (modes: "
                + "; ".join(f"{m.name}: {', '.join(o.name for o in m.operands)}" for m in op.modes) + ")")
    return f"{op.name}: missing operand(s) " + " or ".join(f"{', '.join(miss)} (mode {mode})" for mode, miss in needs)


def _locations_fit(op: OpSpec, mode: Mode, profile: str, operands) -> bool:
    """Whether every operand given with a location is one the mode's loc rules allow on the profile."""
    for rule in rules_for(op, mode.name, profile):
        if rule.kind != "loc":
            continue
        for name in rule.operands:
            loc = getattr(operands.get(name), "loc", None)
            if loc is not None and loc not in rule.allow:
                return False
    return True


_RULES_FOR: dict[tuple[int, str, str], tuple[OpSpec, tuple[Rule, ...]]] = {}


def rules_for(op: OpSpec, mode: str, profile: str) -> tuple[Rule, ...]:
    """The op's rules that apply to ``mode`` on ``profile`` (remembered per op object)."""
    entry = _RULES_FOR.get((id(op), mode, profile))
    if entry is None or entry[0] is not op:
        if len(_RULES_FOR) >= 50_000:
            _RULES_FOR.clear()
        entry = _RULES_FOR[id(op), mode, profile] = (
            op, tuple(r for r in op.rules if mode in r.modes and profile in r.profiles))
    return entry[1]


def make_scope(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping,
               unseen: frozenset[str] = frozenset()) -> Scope:
    type_vars = {}
    for o in mode.operands:
        if o.name in operands and o.dtype and o.dtype not in type_vars:
            type_vars[o.dtype] = operands[o.name].dtype
    scope = Scope(
        isa=db.isa,
        tiles={n: t for n, t in operands.items() if isinstance(t, TileDesc | GlobalDesc)},
        type_vars=type_vars,
        profile_constants=db.isa.profiles[profile].constants,
        attrs={n: t.value for n, t in operands.items() if isinstance(t, AttrDesc)},
        variants=db.isa.profiles[profile].variants,
    )
    bind_lets([let for let in op.let if let[0] not in unseen], scope)
    return scope


def state_reads(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping) -> tuple[str, ...]:
    """The configuration registers this invocation reads on ``profile``: those its statements name, leaving
    out the statements whose ``when`` is false here (TIMG2COL reads the img2col registers on the NPUs only)."""
    if not mode.reads_state:
        return ()
    scope = make_scope(db, op, mode, profile, operands)
    found: list[str] = []
    for stmt in mode.semantics:
        if stmt.when is not None:
            try:
                if not evaluate(stmt.when, scope):
                    continue
            except PtospecError:
                pass  # not decided before it runs: counted
        stmt = stmt.expanded()
        parts = (stmt.value, stmt.where, *stmt.target.indices)
        for node in (n for part in parts if part is not None for n in walk(part)):
            if isinstance(node, Attr) and node.obj in mode.reads_state and node.obj not in found:
                found.append(node.obj)
    return tuple(found)


def implied_names(op: OpSpec, mode: Mode, implied: Collection[str]) -> frozenset[str]:
    """The operands a form leaves out, the type variables only they bind, and the op-level ``let`` names
    computed from them: what a rule cannot be checked without."""
    if not implied:
        return frozenset()
    names = set(implied)
    names |= {v for v in mode.type_vars if all(o.name in implied for o in mode.operands if o.dtype == v)}
    for name, node, _text in op.let:
        if references(node) & names:
            names.add(name)
    return frozenset(names)


def references(node: Node | None) -> set[str]:
    """Every operand, type variable or ``let`` name an expression mentions."""
    if node is None:
        return set()
    found: set[str] = set()
    for n in walk(node):
        if isinstance(n, Attr):
            found.add(n.obj)
        elif isinstance(n, Name):
            found.add(n.id)
        elif isinstance(n, Index):
            found.add(n.base)
    return found


_RULE_REFERENCES: dict[int, tuple[Rule, frozenset[str]]] = {}  # id(rule) -> (rule, the names it mentions)


def _rule_references(rule: Rule) -> frozenset[str]:
    """Every name the rule mentions (remembered: a rule's expressions never change)."""
    entry = _RULE_REFERENCES.get(id(rule))
    if entry is None or entry[0] is not rule:
        if len(_RULE_REFERENCES) >= 50_000:
            _RULE_REFERENCES.clear()
        found = set(rule.operands) | references(rule.check) | references(rule.when)
        for _name, node, _text in rule.let:
            found |= references(node)
        entry = _RULE_REFERENCES[id(rule)] = (rule, frozenset(found))
    return entry[1]


_REPORTS: list[tuple[Database, dict[tuple, Report]]] = []  # the last database's reports (one slot)
_REPORTS_MAX = 20_000


def validate(
    db: Database, op_name: str, mode_name: str | None, profile: str, operands: Mapping[str, TileDesc | ScalarDesc],
    implied: Collection[str] = (), state: Mapping[str, Mapping[str, object]] | None = None,
) -> Report:
    """Check one invocation.  ``implied`` names operands the assembly form leaves out (a synchronous line
    has no tmp: the implementation allocates it); they are not reported missing, and the rules that
    concern them are listed in ``Report.implied`` instead of being checked.  Reports are remembered (they
    are immutable, and a conformance run asks about the same invocation several times)."""
    operands = plain_operands(operands)  # before the memo: rows=16.0 or np.int64(16) would equal rows=16 there
    state = state or {}
    frozen = tuple(sorted((str(r), tuple(sorted(f.items()))) for r, f in state.items()))
    key = (op_name, mode_name, profile, tuple(operands.items()), tuple(implied), frozen)
    try:
        hash(key)
    except TypeError:  # an unhashable operand: judged without the memo
        return _validate(db, op_name, mode_name, profile, operands, implied, state)
    if not _REPORTS or _REPORTS[0][0] is not db or len(_REPORTS[0][1]) >= _REPORTS_MAX:
        _REPORTS[:] = [(db, {})]
    cached = _REPORTS[0]
    report = cached[1].get(key)
    if report is None:
        report = cached[1][key] = _validate(db, op_name, mode_name, profile, operands, implied, state)
    return report


_JUDGED: list[tuple[Database, dict[tuple, Report]]] = []  # the last database's judgements (one slot)


def judge(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping) -> Report:
    """``validate`` of a whole, well-typed invocation without most sentences: the same rule ids, operands and
    deferred checks; the messages of failed op rules' checks are left empty (location and layout rules and
    checks that cannot be evaluated keep theirs).  For searches, which read only the ids: a
    sentence names the values a check looked at, and working those out costs more than the check.  Remembered
    apart from ``validate``'s reports (those have their sentences)."""
    key = (op.name, mode.name, profile, tuple(operands.items()))
    if not _JUDGED or _JUDGED[0][0] is not db or len(_JUDGED[0][1]) >= _REPORTS_MAX:
        _JUDGED[:] = [(db, {})]
    memo = _JUDGED[0][1]
    report = memo.get(key)
    if report is None:
        report = memo[key] = _validate(db, op.name, mode.name, profile, operands, described=False)
    return report


def _is_int(value, optional: bool = False) -> bool:
    return type(value) is int or (value is None and optional) or (
        isinstance(value, numbers.Integral) and not isinstance(value, bool))


_OPTIONAL_INT = (int, type(None))


def _ill_typed_field(desc: TileDesc | ScalarDesc | AttrDesc | GlobalDesc) -> str | None:
    """What is wrong with the field types of a hand-built descriptor (``parse_descriptor`` builds right ones),
    or None: a float or a string where an extent belongs would otherwise reach NumPy."""
    if (type(desc) is TileDesc and type(desc.rows) is int and type(desc.cols) is int  # the common case, quickly
            and type(desc.valid_row) in _OPTIONAL_INT and type(desc.valid_col) in _OPTIONAL_INT
            and type(desc.fractal) is int and type(desc.loc) is str and type(desc.dtype) is str
            and type(desc.blayout) is str and type(desc.slayout) is str and type(desc.pad) is str
            and type(desc.compact) is str):
        return None
    if isinstance(desc, TileDesc):
        ints = [("rows", False), ("cols", False), ("valid_row", True), ("valid_col", True), ("fractal", False)]
        texts = ("loc", "dtype", "blayout", "slayout", "pad", "compact")
    elif isinstance(desc, GlobalDesc):
        if not isinstance(desc.shape, tuple) or not isinstance(desc.strides, tuple) or not all(
                _is_int(v, True) for v in (*desc.shape, *desc.strides)):
            return "shape and strides must be tuples of integers (or None)"
        ints, texts = [("offset", True), ("size", True)], ("dtype", "layout", "view")
    elif isinstance(desc, ScalarDesc):
        ints, texts = [], ("dtype",)
    else:
        return None
    for field, optional in ints:
        if not _is_int(getattr(desc, field), optional):
            return f"{field} must be an integer{' or None' if optional else ''}, got {getattr(desc, field)!r}"
    for field in texts:
        if not isinstance(getattr(desc, field), str):
            return f"{field} must be a string, got {getattr(desc, field)!r}"
    return None


def plain_operands(operands: Mapping) -> Mapping:
    """``operands`` checked (``_check_operand_types``), with NumPy integers in extents, strides and offsets made
    plain ``int``: a NumPy integer wraps around in a capacity product (2**58 rows would pass) and would share
    the validator's memo entry with the equal plain tile."""
    _check_operand_types(operands)
    out = None
    for name, desc in operands.items():
        plain = _plain(desc)
        if plain is not desc:
            out = out if out is not None else dict(operands)
            out[name] = plain
    return operands if out is None else out


def _as_int(value):
    return value if value is None or type(value) is int else int(value)


def _plain(desc):
    if isinstance(desc, TileDesc):
        fields = ("rows", "cols", "valid_row", "valid_col", "fractal")
        if all(type(getattr(desc, f)) in _OPTIONAL_INT for f in fields):
            return desc
        return replace(desc, **{f: _as_int(getattr(desc, f)) for f in fields})
    if isinstance(desc, GlobalDesc):
        values = (*desc.shape, *desc.strides, desc.offset, desc.size)
        if all(type(v) in _OPTIONAL_INT for v in values):
            return desc
        return replace(desc, shape=tuple(map(_as_int, desc.shape)), strides=tuple(map(_as_int, desc.strides)),
                       offset=_as_int(desc.offset), size=_as_int(desc.size))
    return desc


def _check_operand_types(operands: Mapping) -> None:
    """Operand names are strings and descriptors are descriptors with fields of their types (a hand-built one
    may have a float or a string where an extent belongs, which would otherwise reach NumPy)."""
    for name, desc in operands.items():
        if not isinstance(name, str):
            raise InvocationError(f"operand names are strings, got {name!r}", rule="invocation.operand")
        if not isinstance(desc, TileDesc | ScalarDesc | AttrDesc | GlobalDesc):
            raise InvocationError(f"operand {name!r} must be described by a TileDesc, ScalarDesc, AttrDesc or "
                                  f"GlobalDesc (parse_descriptor gives one), got {type(desc).__name__}",
                                  rule="invocation.operand")
        wrong = _ill_typed_field(desc)
        if wrong:
            raise InvocationError(f"operand {name!r}: {wrong}", rule="invocation.operand")


def _validate(
    db: Database, op_name: str, mode_name: str | None, profile: str, operands: Mapping[str, TileDesc | ScalarDesc],
    implied: Collection[str] = (), state: Mapping[str, Mapping[str, object]] | None = None, described: bool = True,
) -> Report:
    op, mode = resolve(db, op_name, mode_name, profile, operands)
    out: list[Violation] = []
    deferred: list[str] = []
    declared = {o.name: o for o in mode.operands}
    implied = [n for n in implied if n in declared and n not in operands]
    unseen = implied_names(op, mode, implied)
    skipped: list[str] = []

    # 1. the operand list itself
    missing = [n for n in declared if n not in operands and n not in implied]
    extra = [n for n in operands if n not in declared]
    if missing:
        out.append(Violation("invocation.missing-operand", tuple(missing),
                             f"missing operand(s) {', '.join(missing)}; {op.name} {mode.name} takes "
                             f"{', '.join(declared)}", "invocation"))
    if extra:
        out.append(Violation("invocation.unknown-operand", tuple(extra),
                             f"{op.name} {mode.name} has no operand(s) {', '.join(extra)}; it takes "
                             f"{', '.join(declared)}", "invocation"))
    for name, desc in operands.items():
        o = declared.get(name)
        if o is None:
            continue
        if o.is_attr:
            if not isinstance(desc, AttrDesc) or not attrs.is_legal(db.isa, o, desc.value):
                got = attrs.spell_value(desc.value) if isinstance(desc, AttrDesc) else "a tile or scalar"
                legal = attrs.legal_values(db.isa, o)
                want = (f"one of {', '.join(attrs.spell_value(v) for v in legal)}" if legal is not None
                        else "a value")
                out.append(Violation("invocation.attr", (name,), f"{name} must be {want} "
                                     f"({attrs.describe(db.isa, o)}); got {got}", "invocation"))
            continue
        if o.role == "scalar":
            want, fits = "a scalar (a dtype name)", isinstance(desc, ScalarDesc)
        elif o.is_global:
            want, fits = "a global tensor view (gm, RxCxT)", isinstance(desc, GlobalDesc)
        else:
            want, fits = "a tile", isinstance(desc, TileDesc)
        if not fits:
            out.append(Violation("invocation.operand-kind", (name,), f"{name} must be {want}", "invocation"))
        elif desc.dtype not in db.isa.dtypes:
            out.append(Violation("invocation.dtype", (name,), f"unknown dtype {desc.dtype!r}", "invocation"))
    if out:
        return Report(op.name, mode.name, profile, tuple(out), ())

    # 2. every tile must be a well-formed Tile, every global view a well-formed GlobalTensor
    for name, desc, rule, verdict in _form_verdicts(db, operands, profile):
        if verdict is None:
            deferred.append(f"{rule.id} ({name})")
        else:  # False, or why the check could not be evaluated
            if not described:
                out.append(Violation(rule.id, (name,), "", "static", f"{rule.file}:{rule.line}"))
                continue
            why = verdict if verdict is not False else (
                tile_rule_values(db, desc, rule, profile) if isinstance(desc, TileDesc) else _describe(desc))
            out.append(Violation(rule.id, (name,), f"{name}: {rule.message['en']} ({why})", "static",
                                 f"{rule.file}:{rule.line}"))

    # 3. operands sharing a type variable must share the dtype; 4. the profile's dtype table
    out.extend(type_violations(db, op, mode, profile, operands))

    # 5. the op's rules
    unchecked: list[str] = []
    rules = rules_for(op, mode.name, profile)
    outcomes = _remembered_outcomes(db, op, mode, profile, operands, rules) if not (described or unseen or state) \
        else _op_rule_outcomes(db, op, mode, profile, operands, unseen, state, rules, described)
    for rule, outcome in outcomes:
        if outcome == "skipped":
            skipped.append(rule.id)
        elif outcome == "unchecked":
            unchecked.append(rule.id)  # checked where the registers are known (execution, a program's run)
        elif outcome == "deferred":
            deferred.append(rule.id)
        else:
            out.extend(outcome)
    return Report(op.name, mode.name, profile, tuple(out), tuple(deferred), tuple(skipped), tuple(unchecked))


def _form_verdicts(db: Database, operands: Mapping, profile: str, well_formed: Collection[str] = ()):
    """(operand, descriptor, rule, verdict) of every tile and global-view well-formedness rule (see
    ``rule_verdicts``), leaving out the operands named in ``well_formed`` (known to pass every one)."""
    for name, desc in operands.items():
        if name in well_formed:
            continue
        if isinstance(desc, TileDesc):
            var, isa_rules = "t", db.isa.tile_rules
        elif isinstance(desc, GlobalDesc):
            var, isa_rules = "g", db.isa.global_rules
        else:
            continue
        for rule, verdict in rule_verdicts(db, desc, var, isa_rules, profile):
            yield name, desc, rule, verdict


def _op_rule_outcomes(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping,
                      unseen: frozenset[str], state: Mapping | None, rules: Collection[Rule], described: bool = True):
    """(rule, outcome) of each of ``rules`` that applies: "skipped" (it concerns an operand the form leaves
    out), "unchecked" (it reads a register not given), "deferred" (it needs a dynamic value), or the list
    of its violations (without their sentences unless ``described``)."""
    base = make_scope(db, op, mode, profile, operands, unseen)
    base.state = dict(state or {})
    unset = set(db.isa.state) - set(base.state) - set(operands)  # registers this invocation is not given
    for rule in rules:
        if unseen and _rule_references(rule) & unseen:
            yield rule, "skipped"
            continue
        if unset and _rule_references(rule) & unset:
            yield rule, "unchecked"
            continue
        # a rule with ``let`` values of its own binds them in a copy; evaluation never changes a scope
        scope = base if not rule.let else Scope(
            isa=base.isa, tiles=base.tiles, type_vars=base.type_vars, profile_constants=base.profile_constants,
            values=dict(base.values), attrs=base.attrs, state=base.state)
        try:
            bind_lets(rule.let, scope)
            if rule.when is not None and not evaluate(rule.when, scope):
                continue
            yield rule, _apply_rule(db, rule, scope, operands, described)
        except UnknownValue:
            yield rule, "deferred"
        except ExprError as exc:
            yield rule, [Violation(rule.id, rule.operands, f"cannot evaluate the check: {exc.message}", rule.phase,
                                   f"{rule.file}:{rule.line}")]


_OUTCOMES: list[tuple[Database, dict[tuple, tuple], list[int]]] = []  # the last database's: its tables (per
# rule and per list of rules), and how many outcomes they hold
_OUTCOMES_MAX = 400_000  # outcomes remembered in all (each a few values and a verdict); a full search makes ~170k
_UNSEEN = object()


def _remembered_outcomes(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping,
                         rules: Collection[Rule]) -> list[tuple[Rule, list[Violation] | str]]:
    """(rule, outcome) of each of ``rules`` that applies, as ``_op_rule_outcomes`` gives them without sentences,
    for a whole invocation of ``mode`` given no configuration state.  An outcome depends only on the values of
    the fields the rule reads (``reads.rule_reads``) and on the profile: each is remembered by those."""
    if not _OUTCOMES or _OUTCOMES[0][0] is not db or _OUTCOMES[0][2][0] >= _OUTCOMES_MAX:
        _OUTCOMES[:] = [(db, {}, [0])]
    table = _OUTCOMES[0][1]
    group = table.get((op.name, mode.name, profile, id(rules)))  # searches pass the same few lists again and again
    if group is None or group[0] is not rules:
        group = table[op.name, mode.name, profile, id(rules)] = (
            rules, tuple(_outcome_memo(db, op, mode, profile, rule, table) for rule in rules))
    found: list[tuple[Rule, list[Violation] | str] | None] = []
    missing: list[tuple[int, Rule, object, dict]] = []
    for rule, key_of, memo in group[1]:
        key = key_of(operands)
        outcome = memo.get(key, _UNSEEN)
        if outcome is _UNSEEN:
            missing.append((len(found), rule, key, memo))
            found.append(None)
        elif outcome is not None:
            found.append((rule, outcome))
    if missing:
        computed = {id(rule): outcome for rule, outcome in _op_rule_outcomes(
            db, op, mode, profile, operands, frozenset(), None, [rule for _, rule, _, _ in missing], False)}
        for at, rule, key, memo in missing:
            outcome = computed.get(id(rule))  # None: its condition does not hold here
            memo[key] = outcome
            _OUTCOMES[0][2][0] += 1
            found[at] = (rule, outcome) if outcome is not None else None
    return [item for item in found if item is not None]


def _outcome_memo(db: Database, op: OpSpec, mode: Mode, profile: str, rule: Rule,
                  table: dict) -> tuple[Rule, Callable[[Mapping], object], dict]:
    """(rule, what of the operands its outcome depends on, its outcomes on ``profile`` by those), one per op,
    mode, rule and profile (the getters read the op's lets)."""
    entry = table.get((op.name, mode.name, profile, rule.id, id(rule)))
    if entry is None or entry[0] is not rule:
        entry = table[op.name, mode.name, profile, rule.id, id(rule)] = (
            rule, _key_function(_read_getters(db, op, mode, rule)), {})
    return entry


def _key_function(getters: tuple[tuple[str, Callable], ...]) -> Callable[[Mapping], object]:
    """The operands -> what ``getters`` read of them, as one hashable value."""
    if len(getters) == 1:
        ((name, get),) = getters
        return lambda operands: get(operands.get(name))
    return lambda operands: tuple([get(operands.get(name)) for name, get in getters])


def _read_getters(db: Database, op: OpSpec, mode: Mode, rule: Rule) -> tuple[tuple[str, Callable], ...]:
    """(operand, what of its descriptor the rule reads) for each operand of ``mode`` the rule reads: the
    fields of a tile, a whole descriptor otherwise (or where the rule reads a whole tile)."""
    reads = rule_reads(db, op, mode).get(rule.id)
    if reads is None:  # not a rule of this mode: judged on every operand
        reads = frozenset((o.name, ANY) for o in mode.operands)
    getters = []
    for o in mode.operands:
        fields = sorted({f for name, f in reads if name == o.name})
        if not fields:
            continue
        if ANY in fields or not set(fields) <= set(TileDesc.FIELDS):
            getters.append((o.name, _whole))
        else:
            getters.append((o.name, _fields_of(tuple(fields))))
    return tuple(getters)


def _whole(desc):
    return desc


def _fields_of(fields: tuple[str, ...]) -> Callable:
    get = attrgetter(*fields)

    def read(desc):
        return get(desc) if type(desc) is TileDesc else desc
    return read


_DTYPE_VERDICTS: list[tuple[Database, dict[tuple, tuple[Violation, ...]]]] = []  # the last database's (one slot)


def type_violations(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping) -> tuple[Violation, ...]:
    """The element-type checks of a well-formed invocation: operands sharing a type variable share the
    dtype (``dtype.same-<var>``), and the profile's dtype table admits the types (``dtype.<var>``).
    Remembered per operands' element types (searches vary the shapes far more often than the types)."""
    key = (op.name, mode.name, profile, tuple(operands), tuple([d.dtype for d in operands.values()]))
    if not _DTYPE_VERDICTS or _DTYPE_VERDICTS[0][0] is not db or len(_DTYPE_VERDICTS[0][1]) >= _REPORTS_MAX:
        _DTYPE_VERDICTS[:] = [(db, {})]
    memo = _DTYPE_VERDICTS[0][1]
    found = memo.get(key)
    if found is None:
        found = memo[key] = (*_same_type_violations(mode, operands),
                             *_dtype_violations(db, op, mode, profile, operands))
    return found


def _same_type_violations(mode: Mode, operands: Mapping) -> list[Violation]:
    """``dtype.same-<var>`` for each type variable whose operands have different element types."""
    out: list[Violation] = []
    for var in mode.type_vars:
        users = [o.name for o in mode.operands if o.dtype == var and o.name in operands]
        kinds = {operands[u].dtype for u in users}
        if len(kinds) > 1:
            detail = ", ".join(f"{u}={operands[u].dtype}" for u in users)
            out.append(Violation(f"dtype.same-{var.lower()}", tuple(users),
                                 f"{', '.join(users)} must have the same element type ({detail})", "static"))
    return out


def failing_rules(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping,
                  op_rules: Collection[Rule], well_formed: Collection[str] = ()) -> frozenset[str] | None:
    """The ids of the well-formedness rules and of ``op_rules`` (a subset of the mode's rules on
    ``profile``) that ``operands`` break, judged as ``validate`` judges them; None when one of them needs a
    dynamic value.  For searches that vary only what those rules read, on an invocation ``validate`` has
    otherwise found well-formed: the rest of its report cannot change.  ``well_formed``: operands known to
    pass every well-formedness rule (unchanged ones of a legal invocation), not judged again."""
    failed: set[str] = set()
    for _name, _desc, rule, verdict in _form_verdicts(db, operands, profile, well_formed):
        if verdict is None:
            return None
        failed.add(rule.id)
    outcomes = _remembered_outcomes(db, op, mode, profile, operands, op_rules) if op_rules else ()
    for _rule, outcome in outcomes:
        if outcome == "deferred":
            return None
        if isinstance(outcome, list):
            failed.update(v.rule for v in outcome)
    return frozenset(failed)


_SIZE_FUNCTIONS = ("bytes", "bits")


def sizes_only(nodes: list[Node], type_vars: Collection[str], tiles: Collection[str]) -> bool:
    """Whether the expressions read element types only through their sizes (``bytes(T)``, ``bits(src.dtype)``)
    and read no whole tile: then two invocations whose types have the same sizes get the same verdicts."""
    def is_type(n: Node) -> bool:
        return (isinstance(n, Attr) and n.name == "dtype") or (isinstance(n, Name) and n.id in type_vars)

    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, Call) and n.func in _SIZE_FUNCTIONS and all(is_type(a) for a in n.args):
            continue
        if is_type(n) or isinstance(n, Index) or (isinstance(n, Name) and n.id in tiles):
            return False
        stack.extend(children(n))
    return True


_TILE_VERDICTS: list[tuple[object, dict[object, tuple], dict[int, tuple]]] = []  # the last ISA's verdicts, per
# descriptor and per rule (one slot)
_TILE_VERDICTS_MAX = 1_000_000  # entries are small: most descriptors break no rule


def rule_verdicts(db: Database, desc: TileDesc | GlobalDesc, var: str, rules,
                  profile: str) -> tuple[tuple[Rule, bool | str | None], ...]:
    """Each well-formedness rule ``desc`` does not pass on ``profile``, with its verdict: False, None (needs
    a dynamic value) or a string (why the check cannot be evaluated, e.g. sizes beyond 2**64).  Remembered
    per descriptor and profile: the verdict depends on nothing else, and searches ask about the same
    operands often."""
    if not _TILE_VERDICTS or _TILE_VERDICTS[0][0] is not db.isa or len(_TILE_VERDICTS[0][1]) >= _TILE_VERDICTS_MAX:
        _TILE_VERDICTS[:] = [(db.isa, {}, {})]
    cached = _TILE_VERDICTS[0]
    mine = desc.__dict__.get("_verdicts") if type(desc) is TileDesc else None
    if mine is not None and mine[0] is rules and mine[1] == profile:  # this very tile judged by these rules
        return mine[2]
    key = _verdict_key(db, desc, var, rules, profile)
    verdicts = cached[1].get(key)
    if verdicts is None:
        scope = Scope(isa=db.isa, tiles={var: desc}, profile_constants=db.isa.profiles[profile].constants)
        found: list[tuple[Rule, bool | str | None]] = []
        for rule in _applying(db, desc, var, rules, profile, scope):
            verdict = _rule_verdict(db, desc, var, rule, profile, scope, cached[2])
            if verdict is not True:
                found.append((rule, verdict))
        verdicts = cached[1][key] = tuple(found)
    if type(desc) is TileDesc:  # kept with the rules object itself, so that another database's never match
        desc.__dict__["_verdicts"] = (rules, profile, verdicts)
    return verdicts


def _rule_verdict(db: Database, desc: TileDesc | GlobalDesc, var: str, rule: Rule, profile: str, scope: Scope,
                  memo: dict[int, tuple]) -> bool | str | None:
    """One well-formedness rule's verdict on ``desc``: True (it passes, or its condition does not hold), False,
    None (a dynamic value) or why it cannot be evaluated.  Remembered per rule by the fields of ``desc`` it
    reads (most of a search's tiles differ from one another in a field or two, and each rule reads a few)."""
    entry = memo.get(id(rule))
    if entry is None or entry[0] is not rule:
        entry = memo[id(rule)] = (rule, _tile_key_function(db, rule, var), {})
    key = (profile, entry[1](desc)) if type(desc) is TileDesc else (profile, desc)
    verdicts = entry[2]
    verdict = verdicts.get(key, _UNSEEN)
    if verdict is _UNSEEN:
        try:
            verdict = (rule.when is not None and not evaluate(rule.when, scope)) or bool(evaluate(rule.check, scope))
        except UnknownValue:
            verdict = None
        except ExprError as exc:
            verdict = exc.message
        verdicts[key] = verdict
    return verdict


def _tile_key_function(db: Database, rule: Rule, var: str) -> Callable[[TileDesc], object]:
    """A tile -> the values of its fields ``rule`` reads (its element type by its size where the rule reads
    types only through ``bytes``/``bits``)."""
    nodes = [n for n in (rule.check, rule.when, *(x for _, x, _ in rule.let)) if n is not None]
    reads = expression_reads(nodes, {}, {var}, {}, set())
    named = {f for _, f in reads}
    fields = TileDesc.FIELDS if not named <= set(TileDesc.FIELDS) else tuple(f for f in TileDesc.FIELDS if f in named)
    if not fields:
        return lambda desc: ()
    read = attrgetter(*fields)
    if "dtype" not in fields or not sizes_only(nodes, (), (var,)):
        return read
    at, dtypes = fields.index("dtype"), db.isa.dtypes

    def sized(desc: TileDesc) -> object:
        dt = dtypes.get(desc.dtype)
        if dt is None:
            return read(desc)
        if len(fields) == 1:
            return (dt.bytes, dt.bits)
        values = read(desc)
        return (*values[:at], (dt.bytes, dt.bits), *values[at + 1:])
    return sized


_WHEN_FIELDS: dict[int, tuple[object, tuple[str, ...] | None]] = {}  # id(rules) -> (rules, fields their whens read)
_APPLYING: list[tuple[object, dict[tuple, tuple[Rule, ...]]]] = []  # the last ISA's (one slot)
_APPLYING_MAX = 20_000  # a full search meets ~360 combinations of the fields the conditions read


def _applying(db: Database, desc: TileDesc | GlobalDesc, var: str, rules, profile: str, scope: Scope):
    """``rules`` less those whose condition (``when``) is false for ``desc`` on ``profile``.  A condition reads
    a few fields (a tile's location, layouts and fractal size), so which rules apply is remembered by those:
    most of the rules (one capacity rule per location) are never looked at again."""
    entry = _WHEN_FIELDS.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_WHEN_FIELDS) >= _APPLYING_MAX:  # rule lists of databases loaded before
            _WHEN_FIELDS.clear()
        reads = expression_reads([r.when for r in rules if r.when is not None], {}, {var}, {}, set())
        fields = {f for _, f in reads}
        entry = _WHEN_FIELDS[id(rules)] = (rules, tuple(sorted(fields)) if fields <= set(TileDesc.FIELDS) else None)
    fields = entry[1]
    if fields is None or type(desc) is not TileDesc:
        return rules
    if not _APPLYING or _APPLYING[0][0] is not db.isa or len(_APPLYING[0][1]) >= _APPLYING_MAX:
        _APPLYING[:] = [(db.isa, {})]
    memo = _APPLYING[0][1]
    key = (id(rules), profile, *(getattr(desc, f) for f in fields))
    found = memo.get(key)
    if found is None or found[0] is not rules:
        kept = []
        for rule in rules:
            try:
                if rule.when is not None and not evaluate(rule.when, scope):
                    continue
            except PtospecError:
                pass  # judged (and reported) with its check
            kept.append(rule)
        found = memo[key] = (rules, tuple(kept))
    return found[1]


_READ_FIELDS: dict[int, tuple[object, Callable, int | None]] = {}  # id(rules) -> (rules, the fields they read,
# where the dtype is among those when they read it only through its size)


def _verdict_key(db: Database, desc: TileDesc | GlobalDesc, var: str, rules, profile: str) -> tuple:
    """What the verdicts of ``rules`` on a tile depend on: the fields they read (a type by its size, when
    they read types only through ``bytes``/``bits``) and the profile.  Descriptors that differ only in
    what no rule reads (a pad value, f16 against bf16) share their verdicts."""
    if not isinstance(desc, TileDesc):
        return (rules is db.isa.tile_rules, desc, profile)
    entry = _READ_FIELDS.get(id(rules))
    if entry is None or entry[0] is not rules:
        nodes = [n for r in rules for n in (r.check, r.when, *(x for _, x, _ in r.let)) if n is not None]
        named = {n.name for node in nodes for n in walk(node) if isinstance(n, Attr) and n.obj == var}
        whole = any(isinstance(n, Name) and n.id == var for node in nodes for n in walk(node))
        fields = TileDesc.FIELDS if whole or "layout" in named else tuple(f for f in TileDesc.FIELDS if f in named)
        sized = fields.index("dtype") if "dtype" in fields and sizes_only(nodes, (), (var,)) else None
        entry = _READ_FIELDS[id(rules)] = (rules, attrgetter(*fields) if fields else lambda desc: (), sized)
    _rules, read, sized = entry
    values = read(desc)
    if sized is not None:
        dt = db.isa.dtypes.get(desc.dtype)
        if dt is not None:
            values = (dt.bytes, dt.bits) if type(values) is not tuple else (
                *values[:sized], (dt.bytes, dt.bits), *values[sized + 1:])
    return (rules is db.isa.tile_rules, profile, values)


def tile_verdicts(db: Database, desc: TileDesc, profile: str) -> tuple[tuple[Rule, bool | str | None], ...]:
    """The tile rules one tile does not pass, with their verdicts (see ``rule_verdicts``)."""
    return rule_verdicts(db, desc, "t", db.isa.tile_rules, profile)


def tile_rule_values(db: Database, desc: TileDesc, rule: Rule, profile: str) -> str:
    """What a well-formedness rule ``desc`` breaks looked at: its fields, and the quantities its comparisons
    compare (``t.rows * t.cols * bytes(t.dtype)=4096``, ``profile.vec_bytes=196608``), each once."""
    scope = Scope(isa=db.isa, tiles={"t": desc}, profile_constants=db.isa.profiles[profile].constants)
    shown = [part for part in _values(rule, scope).split(", ") if not part.startswith("check: ")]
    for node in walk(rule.check):
        if not (isinstance(node, Binary) and node.op in ("==", "!=", "<", "<=", ">", ">=")):
            continue
        for side in (node.left, node.right):
            if isinstance(side, Binary) and side.op == "%":
                side = side.left  # x % 32 == 0: x is what the reader wants
            if not isinstance(side, Binary | Call):
                continue
            with contextlib.suppress(Exception):
                shown.append(f"{_text(side)}={evaluate(side, scope)}")
    return ", ".join(dict.fromkeys(shown))


def _text(node) -> str:
    """An expression as written (for messages); raises ValueError for forms messages do not show."""
    if isinstance(node, Binary):
        return f"{_text(node.left)} {node.op} {_text(node.right)}"
    if isinstance(node, Attr):
        return f"{node.obj}.{node.name}"
    if isinstance(node, Num):
        return str(node.value)
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Call):
        return f"{node.func}({', '.join(_text(a) for a in node.args)})"
    raise ValueError(node)


def _describe(t: TileDesc | GlobalDesc) -> str:
    if isinstance(t, GlobalDesc):
        def dims(values):
            return "x".join("?" if v is None else str(v) for v in values)
        offset = "?" if t.offset is None else t.offset
        size = "?" if t.size is None else t.size
        return f"global {dims(t.shape)} {t.dtype}, strides {dims(t.strides)}, {t.layout}, offset {offset} of {size}"
    vr = "?" if t.valid_row is None else t.valid_row
    vc = "?" if t.valid_col is None else t.valid_col
    return f"{t.loc} {t.rows}x{t.cols} {t.dtype}, valid {vr}x{vc}, {t.blayout}/{t.slayout}"


def _apply_rule(db: Database, rule: Rule, scope: Scope, operands, described: bool = True) -> list[Violation]:
    spec = f"{rule.file}:{rule.line}"
    if rule.kind == "loc":  # one violation naming every operand the rule constrains with its location
        bad = tuple(n for n in rule.operands if operands[n].loc not in rule.allow)
        seen = ", ".join(f"{n} is {operands[n].loc}" for n in rule.operands)
        return [Violation(rule.id, bad, f"{rule.message['en']} ({seen})", rule.phase, spec)] if bad else []
    if rule.kind == "layout":
        shown = {}
        for n in rule.operands:
            t = operands[n]
            name = t.layout if isinstance(t, GlobalDesc) else db.isa.layout_name(t.blayout, t.slayout)
            shown[n] = (name in rule.allow, name or f"{t.blayout}/{t.slayout}")
        bad = tuple(n for n, (ok, _) in shown.items() if not ok)
        seen = ", ".join(f"{n} is {name}" for n, (_, name) in shown.items())
        return [Violation(rule.id, bad, f"{rule.message['en']} ({seen})", rule.phase, spec)] if bad else []
    if evaluate(rule.check, scope):
        return []
    if not described:
        return [Violation(rule.id, rule.operands, "", rule.phase, spec)]
    return [Violation(rule.id, rule.operands, f"{rule.message['en']} ({_values(rule, scope)})", rule.phase, spec)]


_SHOWN: dict[int, tuple[Rule, tuple[tuple[str, str, str], ...]]] = {}  # id(rule) -> (rule, fields it reads)


def _shown_fields(rule: Rule) -> tuple[tuple[str, str, str], ...]:
    """(``obj.name``, obj, name) of every field use in the rule's check and condition."""
    entry = _SHOWN.get(id(rule))
    if entry is None or entry[0] is not rule:
        if len(_SHOWN) >= 50_000:
            _SHOWN.clear()
        nodes = [rule.check] + ([rule.when] if rule.when is not None else [])
        # every field once, in walk order (a message names each value once)
        fields = tuple(dict.fromkeys((f"{n.obj}.{n.name}", n.obj, n.name) for node in nodes for n in walk(node)
                                     if isinstance(n, Attr)))
        entry = _SHOWN[id(rule)] = (rule, fields)
    return entry[1]


def _values(rule: Rule, scope: Scope) -> str:
    """The concrete values a failed check looked at, e.g. ``src.valid_col=255``."""
    shown: list[str] = []
    for key, obj, name in _shown_fields(rule):
        with contextlib.suppress(Exception):
            shown.append(f"{key}={scope.tile_field(obj, name)}")
    for name, _node, _text in rule.let:
        value = scope.values.get(name)
        if isinstance(value, int | float):
            shown.append(f"{name}={value}")
    return ", ".join(shown) or f"check: {rule.check_text}"


ROLE_PRIORITY = {"in": 0, "scalar": 1, "out": 2, "tmp": 3}


def _dtype_violations(db: Database, op: OpSpec, mode: Mode, profile: str, operands) -> list[Violation]:
    """Check the profile's dtype table.

    Type variables are judged in order of the operands that bind them (inputs first,
    then scalars, outputs, tmp): the first variable that no table row admits, given
    the variables before it, is the one reported, with what would be allowed there.
    """
    table = op.dtypes.get(profile)
    if table is None:
        return [Violation("profile.unsupported", (), f"{op.name} is not specified for profile {profile}", "static")]
    rows = [r for r in table.rows if mode.name in r.modes]
    if not rows:
        return [Violation("profile.unsupported-mode", (),
                          f"{op.name} {mode.name} mode is not available on profile {profile}", "static")]
    ordered = sorted((o for o in mode.operands if not o.is_attr and o.name in operands),
                     key=lambda o: ROLE_PRIORITY[o.role])
    binding: dict[str, str] = {}
    for o in ordered:
        binding.setdefault(o.dtype, operands[o.name].dtype)
    users = {v: tuple(o.name for o in mode.operands if o.dtype == v) for v in binding}
    given: list[str] = []
    for var in binding:
        fitting = [r for r in rows if all(binding[w] in r.types[w] for w in given)]
        if not any(binding[var] in r.types[var] for r in fitting):
            allowed = sorted({d for r in fitting for d in r.types[var]}, key=list(db.isa.dtypes).index)
            context = ", ".join(f"{w}={binding[w]}" for w in given)
            with_ctx = f" with {context}" if context else ""
            return [Violation(
                f"dtype.{var.lower()}", users[var],
                f"element type {var}={binding[var]} of {', '.join(users[var])} is not supported on {profile}"
                f"{with_ctx} (allowed: {', '.join(allowed)})", "static")]
        given.append(var)
    return []


def require_legal(report: Report) -> None:
    """Raise ``InvocationError`` naming every violation (used by the executor)."""
    if report.violations:
        lines = "; ".join(v.one_line() for v in report.violations)
        raise InvocationError(
            f"{report.op} {report.mode} on {report.profile} is illegal: {lines}", rule=report.violations[0].rule
        )
