"""Is this invocation legal on profile P?  Derived entirely from the spec.

Given an op, a mode, a profile and concrete operand descriptors, ``validate``
returns every violation with a stable rule id, the operands it concerns, and a
sentence a kernel writer understands.  Checks that need a value only known at
run time (``valid=?x?``) are reported as *deferred*, not as violations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ExprError, InvocationError, UnknownValue
from .expr.ast import Attr, walk
from .expr.evaluate import Scope, bind_lets, evaluate
from .model import Database, Mode, OpSpec, Rule
from .tile import AttrDesc, ScalarDesc, TileDesc


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
            if len(matches) == 1:
                return op, matches[0]
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


def rules_for(op: OpSpec, mode: str, profile: str) -> list[Rule]:
    return [r for r in op.rules if mode in r.modes and profile in r.profiles]


def make_scope(db: Database, op: OpSpec, mode: Mode, profile: str, operands: Mapping) -> Scope:
    type_vars = {}
    for o in mode.operands:
        if o.name in operands and o.dtype and o.dtype not in type_vars:
            type_vars[o.dtype] = operands[o.name].dtype
    scope = Scope(
        isa=db.isa,
        tiles={n: t for n, t in operands.items() if isinstance(t, TileDesc)},
        type_vars=type_vars,
        profile_constants=db.isa.profiles[profile].constants,
        attrs={n: t.value for n, t in operands.items() if isinstance(t, AttrDesc)},
    )
    bind_lets(op.let, scope)
    return scope


def validate(
    db: Database, op_name: str, mode_name: str | None, profile: str, operands: Mapping[str, TileDesc | ScalarDesc]
) -> Report:
    op, mode = resolve(db, op_name, mode_name, profile, operands)
    for name, desc in operands.items():
        if not isinstance(desc, TileDesc | ScalarDesc | AttrDesc):
            raise InvocationError(f"operand {name!r} must be described by a TileDesc, ScalarDesc or AttrDesc "
                                  f"(parse_descriptor gives one), got {type(desc).__name__}", rule="invocation.operand")
    out: list[Violation] = []
    deferred: list[str] = []

    # 1. the operand list itself
    declared = {o.name: o for o in mode.operands}
    missing = [n for n in declared if n not in operands]
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
            enum = db.isa.enums[o.enum]
            if not isinstance(desc, AttrDesc) or desc.value not in enum.values:
                got = desc.value if isinstance(desc, AttrDesc) else "a tile or scalar"
                out.append(Violation("invocation.attr", (name,), f"{name} must be one of {', '.join(enum.values)} "
                                     f"({enum.name}); got {got}", "invocation"))
            continue
        if (o.role == "scalar") != isinstance(desc, ScalarDesc):
            want = "a scalar (a dtype name)" if o.role == "scalar" else "a tile"
            out.append(Violation("invocation.operand-kind", (name,), f"{name} must be {want}", "invocation"))
        elif desc.dtype not in db.isa.dtypes:
            out.append(Violation("invocation.dtype", (name,), f"unknown dtype {desc.dtype!r}", "invocation"))
    if out:
        return Report(op.name, mode.name, profile, tuple(out), ())

    # 2. every tile must be a well-formed Tile
    for name, desc in operands.items():
        if not isinstance(desc, TileDesc):
            continue
        scope = Scope(isa=db.isa, tiles={"t": desc}, profile_constants=db.isa.profiles[profile].constants)
        for rule in db.isa.tile_rules:
            try:
                if rule.when is not None and not evaluate(rule.when, scope):
                    continue
                if not evaluate(rule.check, scope):
                    out.append(Violation(rule.id, (name,), f"{name}: {rule.message['en']} "
                                         f"({_describe(desc)})", "static", f"{rule.file}:{rule.line}"))
            except UnknownValue:
                deferred.append(f"{rule.id} ({name})")
            except ExprError as exc:  # e.g. sizes beyond 2**64 in a hand-built TileDesc
                out.append(Violation(rule.id, (name,), f"{name}: {rule.message['en']} ({exc.message})", "static",
                                     f"{rule.file}:{rule.line}"))

    # 3. operands sharing a type variable must share the dtype
    for var in mode.type_vars:
        users = [o.name for o in mode.operands if o.dtype == var]
        kinds = {operands[u].dtype for u in users}
        if len(kinds) > 1:
            detail = ", ".join(f"{u}={operands[u].dtype}" for u in users)
            out.append(Violation(f"dtype.same-{var.lower()}", tuple(users),
                                 f"{', '.join(users)} must have the same element type ({detail})", "static"))

    # 4. the profile's dtype table
    out.extend(_dtype_violations(db, op, mode, profile, operands))

    # 5. the op's rules
    base = make_scope(db, op, mode, profile, operands)
    for rule in rules_for(op, mode.name, profile):
        scope = Scope(isa=base.isa, tiles=base.tiles, type_vars=base.type_vars,
                      profile_constants=base.profile_constants, values=dict(base.values), attrs=base.attrs)
        try:
            bind_lets(rule.let, scope)
            if rule.when is not None and not evaluate(rule.when, scope):
                continue
            out.extend(_apply_rule(db, rule, scope, operands))
        except UnknownValue:
            deferred.append(rule.id)
        except ExprError as exc:
            out.append(Violation(rule.id, rule.operands, f"cannot evaluate the check: {exc.message}", rule.phase,
                                 f"{rule.file}:{rule.line}"))
    return Report(op.name, mode.name, profile, tuple(out), tuple(deferred))


def _describe(t: TileDesc) -> str:
    vr = "?" if t.valid_row is None else t.valid_row
    vc = "?" if t.valid_col is None else t.valid_col
    return f"{t.loc} {t.rows}x{t.cols} {t.dtype}, valid {vr}x{vc}, {t.blayout}/{t.slayout}"


def _apply_rule(db: Database, rule: Rule, scope: Scope, operands) -> list[Violation]:
    spec = f"{rule.file}:{rule.line}"
    if rule.kind == "loc":
        bad = [n for n in rule.operands if operands[n].loc not in rule.allow]
        return [Violation(rule.id, (n,), f"{rule.message['en']} ({n} is {operands[n].loc})", rule.phase, spec)
                for n in bad]
    if rule.kind == "layout":
        out = []
        for n in rule.operands:
            t = operands[n]
            name = db.isa.layout_name(t.blayout, t.slayout)
            if name not in rule.allow:
                shown = name or f"{t.blayout}/{t.slayout}"
                out.append(Violation(rule.id, (n,), f"{rule.message['en']} ({n} is {shown})", rule.phase, spec))
        return out
    if evaluate(rule.check, scope):
        return []
    return [Violation(rule.id, rule.operands, f"{rule.message['en']} ({_values(rule, scope)})", rule.phase, spec)]


def _values(rule: Rule, scope: Scope) -> str:
    """The concrete values a failed check looked at, e.g. ``src.valid_col=255``."""
    shown: list[str] = []
    nodes = [rule.check] + ([rule.when] if rule.when is not None else [])
    for node in nodes:
        for n in walk(node):
            if isinstance(n, Attr):
                key = f"{n.obj}.{n.name}"
                if key not in shown:
                    with contextlib.suppress(Exception):
                        shown.append(f"{key}={scope.tile_field(n.obj, n.name)}")
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
    ordered = sorted((o for o in mode.operands if not o.is_attr), key=lambda o: ROLE_PRIORITY[o.role])
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
