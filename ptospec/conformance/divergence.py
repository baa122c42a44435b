"""Divergences between a backend and the spec: the record, whether the spec explains it, and the report.

Categories:

* ``wrong-value`` -- an output element inside the valid region differs from the reference;
* ``write-outside-valid`` -- an output element outside the valid region (or memory past a tile, or an
  input tile) changed;
* ``accepts-rejected`` -- the spec rejects the configuration, the backend ran it;
* ``rejects-accepted`` -- the spec accepts the configuration, the backend refused it (compile-time
  or runtime check, crash);
* ``harness-error`` -- the backend itself failed (driver does not compile, protocol error).

Whether the spec already records a divergence is decided from the op's data alone.  First, a
difference may say exactly how it shows (``observed``: profile, category, modes, the rules a
must-reject case breaks, and a ``when`` condition over the case's tiles, type variables and
attributes); a divergence it predicts is recorded.  Otherwise the op's ``differences`` whose claims
cite a source of the profile's dtype table (e.g. the simulator header) are searched for the rule id
involved, or for every ``operand.field`` the failed check or rule mentions (C++ accessors such as
``GetValidRow()`` read as ``valid_row``); a value divergence is covered by a difference that names
its category (``wrong-value`` / ``write-outside-valid``) and the output operands involved.  A
matching difference of kind ``simulator-bug`` marks the divergence as a known simulator bug, any
other kind as a recorded property of the simulator; no match leaves it unrecorded (a possible
simulator bug, or a fact the spec is missing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..asm.types import parse_descriptor
from ..expr.evaluate import evaluate
from ..model import Database, Difference, OpSpec
from ..outputs import npz_bytes, real_folder, replace_in
from ..validator import make_scope

CATEGORIES = ("wrong-value", "write-outside-valid", "accepts-rejected", "rejects-accepted", "harness-error")

RECORDED = "recorded in spec"
KNOWN_BUG = "recorded in spec as a simulator bug"
UNRECORDED = "possible simulator bug / unrecorded"
HARNESS = "harness error"


@dataclass(frozen=True)
class Divergence:
    category: str
    op: str
    mode: str
    profile: str
    case: str  # test id part (or "<mode>-<profile>-property")
    dtypes: dict[str, str]  # type variable -> dtype
    descriptors: dict[str, str]  # operand -> canonical descriptor
    inputs: dict[str, object] = field(repr=False)  # inputs and initial output contents
    problems: tuple[str, ...] = ()
    message: str = ""  # the backend's own words (rejection or error message)
    rule: str | None = None  # must-reject cases: the rule the case breaks
    violations: tuple[str, ...] = ()  # every rule id the validator reports for the configuration
    artifacts: Mapping[str, str] = field(default_factory=dict, repr=False)  # backend repro material
    size: int = 0  # elements over all tiles ("smallest case" = smallest size)
    attribution: str = ""  # a backend over another (ptoas over the simulator): which of them shows it
    attribution_why: str = ""

    @property
    def group(self) -> tuple[str, str, str, str, str]:
        binding = ",".join(f"{k}={v}" for k, v in self.dtypes.items())
        return self.category, self.op, self.mode, self.profile, binding


@dataclass(frozen=True)
class Explanation:
    verdict: str  # RECORDED | KNOWN_BUG | UNRECORDED | HARNESS
    difference: str | None = None  # id of the difference that explains it
    kind: str | None = None
    why: str = ""


# ------------------------------------------------------------------ does the spec explain it?

_ACCESSORS = {"GetValidRow()": "valid_row", "GetValidCol()": "valid_col", "GetValidRow": "valid_row",
              "GetValidCol": "valid_col", "::Rows": ".rows", "::Cols": ".cols"}
_REF = re.compile(r"\b([A-Za-z_]\w*)\.(valid_row|valid_col|rows|cols|dtype|blayout|slayout|loc|fractal|pad)\b")


def normalise(text: str) -> str:
    for accessor, name in _ACCESSORS.items():
        text = text.replace(accessor, name)
    return text


def field_refs(text: str) -> set[str]:
    """``operand.field`` references in a check, claim or C++ condition."""
    return {f"{a}.{b}" for a, b in _REF.findall(normalise(text))}


def _difference_text(diff: Difference) -> str:
    return normalise(" ".join([*diff.topic.values(), *(says["en"] for _, says in diff.claims), diff.resolution["en"]]))


def _outputs_of(problems: tuple[str, ...]) -> list[str]:
    """Output operands a value problem names (``dst[0, 1]: ...`` -> dst)."""
    return sorted({m.group(1) for p in problems for m in [re.match(r"([A-Za-z_]\w*)[\[:]", p)] if m})


def _profile_sources(op: OpSpec, profile: str) -> set[str]:
    table = op.dtypes.get(profile)
    return set(table.sources) if table is not None else set()


def _observed(db: Database, op: OpSpec, d: Divergence) -> tuple[Difference, str] | None:
    """The difference whose ``observed`` entry predicts this divergence: same profile and category, the
    case's mode, and its ``when`` condition true for the case's tiles, type variables, attributes and scalar
    values."""
    broken = {d.rule} | set(d.violations)
    scope = None  # built from the case's descriptors on first need
    for diff in op.differences:
        if diff.kind == "upstream-test":  # an upstream test's own set-up explains its golden, never a backend
            continue
        for obs in diff.observed:
            if obs.profile != d.profile or obs.category != d.category or (obs.modes and d.mode not in obs.modes):
                continue
            if obs.rules and not broken & set(obs.rules):
                continue
            if obs.when is None:
                return diff, f"observed on {obs.profile} as {obs.category}"
            if scope is None:
                operands = {n: parse_descriptor(text, db.isa) for n, text in d.descriptors.items()}
                scope = make_scope(db, op, op.mode(d.mode), d.profile, operands)
                for o in op.mode(d.mode).operands:  # a run-time scalar (an offset) by its value
                    if o.role == "scalar" and o.name in d.inputs:
                        scope.values[o.name] = d.inputs[o.name]
            if evaluate(obs.when, scope):
                return diff, f"observed on {obs.profile} as {obs.category} when {obs.when_text}"
    return None


def _observed_key(op: OpSpec, d: Divergence) -> tuple:
    """What ``_observed`` reads of a divergence: many derived cases of one region share the answer."""
    scalars = tuple((o.name, repr(d.inputs[o.name])) for o in op.mode(d.mode).operands
                    if o.role == "scalar" and o.name in d.inputs)
    return (d.op, d.mode, d.profile, d.category, d.rule, tuple(d.violations), tuple(sorted(d.descriptors.items())),
            scalars)


def explain(db: Database, d: Divergence, observed: dict[tuple, object] | None = None) -> Explanation:
    """``observed``: a memo of ``_observed`` answers shared by the calls on one list of divergences."""
    op = db.op(d.op)
    # An observed entry may also name a harness error: a must-reject case the simulator refuses with an
    # ordinary compile error instead of a static_assert, which the spec records as its way of rejecting.
    if observed is None:
        hit = _observed(db, op, d)
    else:
        key = _observed_key(op, d)
        if key not in observed:
            observed[key] = _observed(db, op, d)
        hit = observed[key]  # type: ignore[assignment]
    if hit is not None:
        diff, why = hit
        verdict = KNOWN_BUG if diff.kind == "simulator-bug" else RECORDED
        return Explanation(verdict, diff.id, diff.kind, why)
    if d.category == "harness-error":
        if d.rule or d.violations:
            broken = d.rule or ", ".join(d.violations)
            return Explanation(HARNESS, why=f"the spec rejects this configuration ({broken}) and the backend failed on "
                                            "it without a deliberate rejection (e.g. an ordinary compiler error "
                                            "instead of a static_assert)")
        if re.search(r"\binclude/", d.message):
            return Explanation(HARNESS, why="the simulator's own headers fail to compile a configuration the spec "
                                            "accepts: a simulator bug, or a rule the spec is missing")
        if "does not compile" in d.message:
            return Explanation(HARNESS, why="the generated call does not compile: check the op's cpp.name/cpp.args "
                                            "against the intrinsic's signature, and the tile types it accepts")
        return Explanation(HARNESS, why="the backend failed; not a verdict on the simulator")
    sources = _profile_sources(op, d.profile)
    evidence: set[str] = set()
    rule_ids: set[str] = set()
    if d.category == "accepts-rejected":
        rule_ids = {d.rule} if d.rule else set(d.violations)
        for rule in op.rules:
            if rule.id in rule_ids:
                evidence |= field_refs(rule.check_text)
    elif d.category == "rejects-accepted":
        evidence = field_refs(d.message)
    else:
        evidence = {ref for p in d.problems for ref in field_refs(p)}
    outputs = _outputs_of(d.problems)
    for diff in op.differences:
        if not any(src in sources for src, _ in diff.claims):
            continue
        text = _difference_text(diff)
        named = sorted(r for r in rule_ids if r and re.search(rf"(?<![\w.-]){re.escape(r)}(?![\w-])", text))
        refs = field_refs(text)
        tagged = d.category in ("wrong-value", "write-outside-valid") and d.category in text and outputs and all(
            re.search(rf"(?<![\w.]){re.escape(o)}(?![\w])", text) for o in outputs)
        if named or tagged or (len(evidence) >= 2 and evidence <= refs):
            why = f"names rule {named[0]}" if named else \
                f"names {d.category} of {', '.join(outputs)}" if tagged else f"mentions {', '.join(sorted(evidence))}"
            verdict = KNOWN_BUG if diff.kind == "simulator-bug" else RECORDED
            return Explanation(verdict, diff.id, diff.kind, why)
    what = f"rule {', '.join(sorted(rule_ids))}" if rule_ids else \
        (", ".join(sorted(evidence)) if evidence else "this behaviour")
    hint = ""
    uncited = [r.id for r in op.rules if r.id in rule_ids and not sources & set(r.sources)]
    if uncited and sources:
        hint = f" (rule {', '.join(uncited)} does not cite {', '.join(sorted(sources))} among its sources)"
    return Explanation(UNRECORDED, why=f"no difference citing {', '.join(sorted(sources)) or 'the profile'} "
                                       f"covers {what}{hint}")


# ------------------------------------------------------------------ grouping


def cause(db: Database, d: Divergence, ex: Explanation | None = None) -> str:
    """What distinguishes one divergence from another of the same op mode and category."""
    ex = ex or explain(db, d)
    if ex.difference:
        return f"difference {ex.difference}"
    if d.category == "accepts-rejected":
        return f"rule {d.rule or ', '.join(d.violations)}"
    if d.category in ("rejects-accepted", "harness-error"):
        # the same failure with other types or line numbers is the same cause
        return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'...'", d.message)) or "(no message)"
    names = sorted({m.group(1) for p in d.problems for m in [re.match(r"([A-Za-z_]\w*)[\[:]", p)] if m})
    return f"outputs {', '.join(names)}" if names else "outputs"


def _smallest(members: list[Divergence]) -> Divergence:
    return min(members, key=lambda d: (d.size, d.case))


@dataclass(frozen=True)
class Group:
    """Divergences of one category, op, mode and profile that share a cause, over dtype bindings."""

    category: str
    op: str
    mode: str
    profile: str
    cause: str
    explanation: Explanation
    smallest: Divergence
    bindings: tuple[tuple[Divergence, int, tuple[str, ...]], ...]  # per dtype binding: smallest, count, ids

    @property
    def count(self) -> int:
        return sum(n for _, n, _ in self.bindings)


def group(db: Database, divergences: list[Divergence]) -> list[Group]:
    """Group by (category, op, mode, profile, cause); inside, the smallest case per dtype binding."""
    memo: dict[tuple, object] = {}
    explained = [(d, explain(db, d, memo)) for d in divergences]
    groups: dict[tuple, list[tuple[Divergence, Explanation]]] = {}
    for d, ex in explained:
        why = cause(db, d, ex)
        groups.setdefault((d.category, d.op, d.mode, d.profile, f"{d.attribution}: {why}" if d.attribution else why),
                          []).append((d, ex))
    out = []
    order = sorted(groups, key=lambda k: (CATEGORIES.index(k[0]) if k[0] in CATEGORIES else 99, *k[1:]))
    for key in order:
        members = [d for d, _ in groups[key]]
        by_binding: dict[tuple, list[Divergence]] = {}
        for d in members:
            by_binding.setdefault(tuple(d.dtypes.items()), []).append(d)
        bindings = tuple((_smallest(ms), len(ms), tuple(sorted({m.case for m in ms})))
                         for _, ms in sorted(by_binding.items()))
        best = _smallest(members)
        ex = next(e for d, e in groups[key] if d is best)
        out.append(Group(*key, explanation=ex, smallest=best, bindings=bindings))
    return out


def _by_attribution(entries: list[dict]) -> dict[str, int]:
    """Cases per attribution (empty for a backend that attributes nothing)."""
    out: dict[str, int] = {}
    for e in entries:
        if e["attribution"]:
            out[e["attribution"]] = out.get(e["attribution"], 0) + e["count"]
    return out


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):  # a configuration register: its fields
        return {str(k): _jsonable(v) for k, v in value.items()}
    arr = np.asarray(value)
    if arr.dtype.kind in "iub":
        return arr.tolist()
    with np.errstate(invalid="ignore"):
        return np.vectorize(_float, otypes=[object])(arr.astype(np.float64)).tolist() if arr.ndim else \
            _float(float(arr))


def npz_inputs(inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Inputs as ``np.savez`` keys: a configuration register's fields as ``REGISTER.FIELD`` (what
    ``ptospec run --inputs`` reads back)."""
    out: dict[str, np.ndarray] = {}
    for name, value in inputs.items():
        if isinstance(value, Mapping):
            out.update({f"{name}.{k}": np.asarray(v) for k, v in value.items()})
        else:
            out[name] = np.asarray(value)
    return out


def _float(x: float) -> float | str:
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return float(x)


def slug(d: Divergence) -> str:
    binding = "-".join(d.dtypes.values())
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{d.category}-{d.op}-{d.mode}-{d.profile}-{binding}")


def _case_json(d: Divergence, with_inputs: bool) -> dict:
    out: dict = {"case": d.case, "dtypes": d.dtypes, "tiles": d.descriptors, "problems": list(d.problems),
                 "message": d.message, "rule": d.rule, "violations": list(d.violations),
                 "cpp": d.artifacts.get("cpp_core", ""),
                 "repro_file": f"repros/{slug(d)}.cpp" if d.artifacts.get("cpp") else "",
                 "pto_file": f"repros/{slug(d)}.pto" if d.artifacts.get("pto") else "",
                 "inputs_file": f"repros/{slug(d)}.npz"}
    if with_inputs:
        out["inputs"] = {n: _jsonable(v) for n, v in d.inputs.items()}
        out["build"] = d.artifacts.get("build", "")
    return out


INLINE_ELEMENTS = 64  # inputs up to this many valid elements are printed in report.md


def _inputs_markdown(db: Database, d: Divergence) -> list[str]:
    roles = {o.name: o.role for o in db.op(d.op).mode(d.mode).operands}
    lines = []
    for name, value in d.inputs.items():
        if isinstance(value, Mapping):
            fields = ", ".join(f"{k}={v}" for k, v in value.items())
            lines.append(f"- state register `{name}`: {fields}")
            continue
        arr = np.asarray(value)
        if arr.ndim == 0:
            lines.append(f"- input `{name}` = {arr.item()!r}")
            continue
        size = "x".join(map(str, arr.shape))
        if roles.get(name) == "out":
            lines.append(f"- `{name}` starts as the sentinel pattern ({size} {arr.dtype})")
            continue
        if arr.ndim == 1:  # a global buffer: printed whole when it is small
            shown_text = f"`{_jsonable(arr)}`" if arr.size <= INLINE_ELEMENTS else "(in the .npz)"
            lines.append(f"- input `{name}`: buffer of {arr.size} {arr.dtype} {shown_text}")
            continue
        valid = _valid(d.descriptors.get(name, ""))
        shown = arr[: valid[0], : valid[1]] if valid else arr
        if shown.size and shown.size <= INLINE_ELEMENTS:
            lines.append(f"- input `{name}`, valid region {shown.shape[0]}x{shown.shape[1]}: `{_jsonable(shown)}`")
        else:
            lines.append(f"- input `{name}`: {size} {arr.dtype} (in the .npz)")
    return lines


def _valid(descriptor: str) -> tuple[int, int] | None:
    m = re.search(r"valid=(\d+)x(\d+)", descriptor)
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass
class ConformanceReport:
    """Everything a conformance run found, written as ``report.json`` and ``report.md``."""

    db: Database
    backend: str
    divergences: list[Divergence]
    totals: dict[str, int]
    matrix: list[dict] = field(default_factory=list)
    stats: dict[str, object] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    command: str = ""
    skipped: dict[str, int] = field(default_factory=dict)  # skip reason -> count
    _groups: list[Group] | None = field(default=None, init=False, repr=False, compare=False)

    def groups(self) -> list[Group]:
        """The divergences grouped and explained (once: the JSON, the Markdown and the repros all read them)."""
        if self._groups is None:
            self._groups = group(self.db, self.divergences)
        return self._groups

    def to_json(self) -> dict:
        entries = []
        for g in self.groups():
            ex = g.explanation
            entries.append({
                "category": g.category, "op": g.op, "mode": g.mode, "profile": g.profile, "cause": g.cause,
                "count": g.count, "verdict": ex.verdict, "difference": ex.difference, "difference_kind": ex.kind,
                "attribution": g.smallest.attribution, "attribution_why": g.smallest.attribution_why,
                "why": ex.why, "smallest": _case_json(g.smallest, with_inputs=True),
                "by_dtypes": [{"count": n, "cases": list(ids), "smallest": _case_json(d, with_inputs=False)}
                              for d, n, ids in g.bindings],
            })
        verdicts: dict[str, int] = {}
        for e in entries:
            verdicts[e["verdict"]] = verdicts.get(e["verdict"], 0) + 1
        return {"backend": self.backend, "command": self.command, "environment": self.environment,
                "totals": self.totals, "stats": self.stats, "skipped": self.skipped,
                "divergence_groups": len(entries), "by_verdict": verdicts,
                "by_category": {c: sum(e["count"] for e in entries if e["category"] == c) for c in CATEGORIES},
                "by_attribution": _by_attribution(entries),
                "divergences": entries, "matrix": self.matrix}

    def write(self, directory: str | Path) -> tuple[Path, Path]:
        out = Path(directory)
        repros = real_folder(out / "repros")
        repros.mkdir(parents=True, exist_ok=True)
        for old in list(repros.glob("*.cpp")) + list(repros.glob("*.npz")) + list(repros.glob("*.pto")):
            old.unlink()
        data = self.to_json()
        for g in self.groups():
            for d, _, _ in g.bindings:
                if d.artifacts.get("cpp"):
                    replace_in(out, f"repros/{slug(d)}.cpp", d.artifacts["cpp"])
                if d.artifacts.get("pto"):  # the assembler's input (the ptoas backend)
                    replace_in(out, f"repros/{slug(d)}.pto", d.artifacts["pto"])
                replace_in(out, f"repros/{slug(d)}.npz", npz_bytes(npz_inputs(d.inputs)))
        replace_in(out, "report.json", json.dumps(data, indent=2) + "\n")
        replace_in(out, "report.md", self.markdown())
        return out / "report.json", out / "report.md"

    def markdown(self) -> str:
        t = self.totals
        lines = [f"# Conformance report: backend `{self.backend}`", ""]
        if self.command:
            lines += [f"`{self.command}`", ""]
        lines += [f"- cases: {t.get('total', 0)} ({t.get('passed', 0)} passed, {t.get('failed', 0)} failed, "
                  f"{t.get('skipped', 0)} skipped)"]
        lines += [f"- {k.replace('_', ' ')}: {v}" for k, v in self.stats.items()]
        lines += [f"- {k}: {v}" for k, v in self.environment.items()]
        if self.skipped:
            lines += ["", "## Skipped", "", "| reason | cases |", "|---|---|"]
            lines += [f"| {r} | {n} |" for r, n in sorted(self.skipped.items(), key=lambda x: -x[1])]
        lines += ["", "## Divergences", ""]
        groups = self.groups()
        if not groups:
            return "\n".join([*lines, "None.", ""])
        lines += ["| # | category | op | mode | cases | dtype bindings | verdict | spec |",
                  "|---|---|---|---|---|---|---|---|"]
        for i, g in enumerate(groups, 1):
            spec = f"`{g.explanation.difference}` ({g.explanation.kind})" if g.explanation.difference else "-"
            who = f" ({g.smallest.attribution})" if g.smallest.attribution else ""
            lines.append(f"| {i} | {g.category} | {g.op} | {g.mode} | {g.count} | {len(g.bindings)} | "
                         f"{g.explanation.verdict}{who} | {spec} |")
        lines.append("")
        for i, g in enumerate(groups, 1):
            d, ex = g.smallest, g.explanation
            lines += [f"### {i}. {g.category}: {g.op} {g.mode} -- {ex.verdict}", "", f"Cause: {g.cause}.", ""]
            if ex.difference:
                lines.append(f"Explained by difference `{ex.difference}` ({ex.kind}) of {g.op}: {ex.why}.")
            else:
                lines.append(f"Not explained by the spec: {ex.why}.")
            if d.attribution:
                lines.append(f"Attributed to the {d.attribution}: {d.attribution_why}.")
            binding = ", ".join(f"{k}={v}" for k, v in d.dtypes.items())
            lines += ["", f"{g.count} case(s) over {len(g.bindings)} dtype binding(s); smallest: `{d.case}` "
                          f"({binding})", ""]
            lines += [f"- `{n}`: `{desc}`" for n, desc in d.descriptors.items()]
            if d.rule:
                lines.append(f"- must be rejected for rule `{d.rule}`")
            if d.message:
                lines.append(f"- backend: {d.message}")
            lines += [f"- {p}" for p in d.problems[:6]]
            lines += _inputs_markdown(self.db, d)
            if d.artifacts.get("cpp_core"):
                lines += ["", "```cpp", d.artifacts["cpp_core"], "```"]
            if d.artifacts.get("pto"):
                lines.append(f"The assembler's input: `repros/{slug(d)}.pto`.")
            if d.artifacts.get("cpp"):
                lines.append(f"Whole program with these inputs: `repros/{slug(d)}.cpp` "
                             f"(build: `{d.artifacts.get('build', '')}`); inputs: `repros/{slug(d)}.npz`.")
            if len(g.bindings) > 1:
                lines += ["", "| dtypes | cases | smallest case | repro |", "|---|---|---|---|"]
                for bd, n, _ in g.bindings:
                    b = ", ".join(f"{k}={v}" for k, v in bd.dtypes.items())
                    lines.append(f"| {b} | {n} | `{bd.case}` | `repros/{slug(bd)}.cpp` |")
            lines.append("")
        return "\n".join(lines)
