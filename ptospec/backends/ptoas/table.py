"""The verifier table: every positive and must-reject case of the generated suite, each printed as a function
of its own, through the assembler's verifier for its profile's target, compared with the spec's verdict.

Categories of a case:

* ``both-accept``, ``both-reject``: the verifier agrees with the spec;
* ``gap``: the spec rejects it (the case's rule), the verifier accepts it;
* ``strict``: the spec accepts it, the verifier rejects it (too strict, or the spec's table too loose: the
  header decides);
* ``choice``: a disagreement that disappears once the case's tiles are normalised as the dialect's parser
  normalises them (``choices`` of specs/ptoas.yaml): the dialect's deliberate difference, not a failure;
* ``unreadable``: the parser could not read the function (a printer or spelling gap);
* ``helper``: rejected on a statement written only to express the case (a treshape alias), not on the case;
* ``crashed``: ptoas died or ran over its time;
* ``not-expressed``: the dialect cannot write the case (a location, element type or enumerator it lacks).

Disagreements are grouped (gap: op, profile and rule; strict and unreadable: op, profile and the assembler's
message with numbers and types blanked) and each group keeps its smallest case as a ``.pto`` reproducer.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ...conformance.cases import Case, check, legal
from ...errors import PtospecError
from ...model import Database
from ...outputs import real_folder, replace_in
from ...program.api import check_program
from ...program.syntax import parse_program
from ...tile import GlobalDesc, TileDesc
from ...validator import validate
from .module import Function, NotExpressible, case_function, module_text
from .spec import PtoasSpec
from .verifier import Job, Verdict, verify_all

CATEGORIES = ("both-accept", "both-reject", "gap", "strict", "choice", "unreadable", "helper", "crashed",
              "not-expressed")
DISAGREEMENTS = ("gap", "strict", "choice", "unreadable", "helper", "crashed")


@dataclass(frozen=True)
class Row:
    test_id: str
    case: Case
    category: str
    message: str = ""  # the assembler's error, or why the case is not expressed
    choice: str = ""  # the choice of specs/ptoas.yaml that explains it
    size: int = 0  # elements of all tiles and views: the smallest case of a group is its reproducer
    text: str = ""  # the function (for a reproducer)

    @property
    def spec_accepts(self) -> bool:
        return self.case.positive


def suite_cases(tests: Path, ops: Iterable[str] | None = None) -> list[tuple[str, Case]]:
    """(test id, case) of every positive and must-reject case of ``tests/test_<op>.py``."""
    files = sorted(tests.glob("test_*.py")) if ops is None else [tests / f"test_{o}.py" for o in ops]
    out = []
    for path in files:
        spec = importlib.util.spec_from_file_location(f"_ptoas_suite_{path.stem}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for kind, label in (("POSITIVE", "test_positive"), ("MUST_REJECT", "test_must_reject")):
            for param in getattr(module, kind, ()):
                out.append((f"{path.name}::{label}[{param.id}]", param.values[0]))
    return out


def _size(tiles: dict) -> int:
    total = 0
    for d in tiles.values():
        if isinstance(d, TileDesc):
            total += d.rows * d.cols
        elif isinstance(d, GlobalDesc):
            n = 1
            for v in d.shape:
                n *= v or 1
            total += n
    return total


def normalised(db: Database, spec: PtoasSpec, profile: str, tiles: dict) -> dict:
    """The tiles as the dialect's parser sees them (``normalise`` choices)."""
    out = dict(tiles)
    for loc, fieldname, value in spec.normalisations(profile):
        for name, d in out.items():
            if isinstance(d, TileDesc) and d.loc == loc and getattr(d, fieldname) != value:
                out[name] = replace(d, **{fieldname: value})
    return out


def _choice(db: Database, spec: PtoasSpec, case: Case, tiles: dict, ptoas_accepts: bool) -> str:
    """The normalise choice that makes the spec agree with the verifier, or ''."""
    for c in spec.choices:
        if c.kind != "normalise" or case.profile not in dict(c.value):
            continue
        value = dict(c.value)[case.profile]
        changed = {n: replace(d, **{c.field: value}) for n, d in tiles.items()
                   if isinstance(d, TileDesc) and d.loc == c.loc and getattr(d, c.field) != value}
        if not changed:
            continue
        op = db.ops[case.op]
        mode = next(m for m in op.modes if m.name == case.mode)
        if legal(check(db, op, mode, case.profile, {**tiles, **changed})) == ptoas_accepts:
            return c.id
    return ""


def classify(db: Database, spec: PtoasSpec, case: Case, tiles: dict, verdict: Verdict, function: Function | None
             ) -> tuple[str, str]:
    """(category, choice id)."""
    if verdict.status == "crashed":
        return "crashed", ""
    if verdict.status == "unreadable":
        return "unreadable", ""
    if verdict.status == "rejected" and function is not None and verdict.line in function.helper_lines:
        return "helper", ""
    accepts = verdict.status == "accepted"
    if accepts == case.positive:
        return ("both-accept" if accepts else "both-reject"), ""
    choice = _choice(db, spec, case, tiles, accepts)
    if choice:
        return "choice", choice
    return ("gap" if accepts else "strict"), ""


def _stated(db: Database, case: Case, fn: Function) -> bool:
    """Whether the printed function breaks the case's rule in a way a program states: our own checker finds
    the violation without running it (a rule on the length of a pointer's buffer is only known at run time)."""
    try:
        result = check_program(db, parse_program(module_text([fn]), "case.pto"), case.profile)
    except PtospecError:  # our reader refuses the function: keep the verdict ptoas gave
        return True
    return any(v.rule == case.reject for v in result.violations)


@dataclass
class Table:
    rows: list[Row]
    ptoas: str
    version: str
    seconds: float = 0.0
    runs: int = 0

    def totals(self) -> Counter:
        return Counter(r.category for r in self.rows)

    def per_op(self) -> dict[tuple[str, str], Counter]:
        out: dict[tuple[str, str], Counter] = defaultdict(Counter)
        for r in self.rows:
            out[(r.case.op, r.case.profile)][r.category] += 1
        return dict(sorted(out.items()))

    def groups(self) -> dict[str, dict[tuple, list[Row]]]:
        out: dict[str, dict[tuple, list[Row]]] = {c: defaultdict(list) for c in DISAGREEMENTS}
        for r in self.rows:
            if r.category not in out:
                continue
            if r.category == "gap":
                key = (r.case.op, r.case.profile, r.case.reject)
            elif r.category == "choice":
                key = (r.case.op, r.case.profile, r.choice)
            else:
                key = (r.case.op, r.case.profile, blank(r.message))
            out[r.category][key].append(r)
        return {c: dict(sorted(g.items(), key=lambda kv: (-len(kv[1]), kv[0]))) for c, g in out.items()}


def blank(message: str) -> str:
    """The message with types and numbers blanked, so one check's messages group together."""
    text = re.sub(r"!pto\.[a-z_]+<[^<>]*>", "<type>", message)
    text = re.sub(r"'[^']*'\s*(?=\bvs\b)", "'…' ", text)
    return re.sub(r"\b\d+\b", "N", text)[:300]


def build_table(db: Database, spec: PtoasSpec, ptoas: str, version: str, cases: list[tuple[str, Case]],
                workers: int, batch: int = 40, progress: Callable[[str, int, int], None] | None = None) -> Table:
    rows: dict[int, Row] = {}
    jobs: dict[str, list[Job]] = defaultdict(list)
    prepared: dict[int, tuple[Case, dict, Function, str]] = {}
    for k, (tid, case) in enumerate(cases):
        if case.profile not in spec.arch:
            continue
        op = db.ops[case.op]
        mode = next(m for m in op.modes if m.name == case.mode)
        tiles = case.parsed(db)
        try:
            fn = case_function(db, spec, op, mode, tiles, f"case{k}")
        except NotExpressible as exc:
            rows[k] = Row(tid, case, "not-expressed", str(exc), size=_size(tiles))
            continue
        prepared[k] = (case, tiles, fn, tid)
        jobs[spec.arch[case.profile]].append(Job(k, fn, alone=not case.positive))
    done_before = 0
    runs: list[int] = []
    total = sum(len(j) for j in jobs.values())
    for arch, arch_jobs in sorted(jobs.items()):
        def report(done: int, _n: int, base: int = done_before) -> None:
            if progress:
                progress("verify", base + done, total)
        verdicts = verify_all(ptoas, arch, arch_jobs, workers, batch, report, runs)
        done_before += len(arch_jobs)
        for k, verdict in verdicts.items():
            case, tiles, fn, tid = prepared[k]
            category, choice = classify(db, spec, case, tiles, verdict, fn)
            message = verdict.message
            if category == "gap" and not _stated(db, case, fn):
                category = "not-expressed"
                message = (f"the printed function does not state the violation of {case.reject}: our own program "
                           "checker defers it to run time (a buffer's length) or reads the line as another mode")
            rows[k] = Row(tid, case, category, message, choice, _size(tiles), fn.text)
    return Table([rows[k] for k in sorted(rows)], ptoas, version, runs=len(runs))


# --------------------------------------------------------------------------- report
def _rule_message(db: Database, case: Case) -> str:
    op = db.ops[case.op]
    mode = next(m for m in op.modes if m.name == case.mode)
    report = validate(db, op.name, mode.name, case.profile, case.parsed(db))
    v = next((v for v in report.violations if v.rule == case.reject), None)
    return v.message if v else ""


def reproducer(db: Database, spec: PtoasSpec, category: str, row: Row, count: int) -> str:
    arch = spec.arch[row.case.profile]
    spec_says = (f"rejects it: [{row.case.reject}] {_rule_message(db, row.case)}" if row.case.reject
                 else "accepts it (a positive case)")
    ptoas_says = f"rejects it: {row.message}" if row.message else "accepts it"
    head = [f"// ptospec verifier table: {category}, {count} case(s) like this one ({row.case.op} {row.case.mode}, "
            f"profile {row.case.profile})",
            f"// the spec {spec_says}",
            f"// ptoas --pto-arch={arch} {ptoas_says}",
            f"// case: {row.test_id}",
            f"// run: ptoas THIS_FILE -o out.cpp --pto-arch={arch}"]
    if row.choice:
        head.append(f"// explained by the dialect's choice {row.choice} (specs/ptoas.yaml)")
    fn = Function("case", re.sub(r"@case\d+\(", "@case(", row.text, count=1), (), 0)
    return "\n".join(head) + "\n" + module_text([fn], arch)


def _slug(parts: Iterable[object]) -> str:
    text = "-".join(str(p) for p in parts)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120].strip("_")


def representatives(table: Table, categories: tuple[str, ...] = ("gap", "strict")) -> list[Row]:
    """The smallest case of each disagreement group of ``categories`` (its reproducer)."""
    return [min(rows, key=lambda r: (r.size, r.test_id)) for c, by_key in table.groups().items()
            if c in categories for rows in by_key.values()]


def write_report(db: Database, spec: PtoasSpec, table: Table, out: Path,
                 simulator: dict[str, str] | None = None) -> dict:
    """``simulator``: test id -> what the CPU simulator does with that case (``simulator.simulator_outcomes``)."""
    out.mkdir(parents=True, exist_ok=True)
    repros = real_folder(out / "repros")
    if repros.is_dir():
        for old in repros.rglob("*.pto"):
            old.unlink()
    groups = table.groups()
    listed: dict[str, list[dict]] = {}
    for category, by_key in groups.items():
        entries = []
        for n, (key, rows) in enumerate(by_key.items()):
            smallest = min(rows, key=lambda r: (r.size, r.test_id))
            path = None
            if smallest.text:
                path = f"repros/{category}/{n:03d}-{_slug(key[:2])}.pto"
                replace_in(out, path, reproducer(db, spec, category, smallest, len(rows)))
            entries.append({"op": key[0], "profile": key[1], "key": key[2], "cases": len(rows),
                            "rule": smallest.case.reject, "ptoas": smallest.message, "choice": smallest.choice,
                            "repro": path,
                            "example": smallest.test_id,
                            "simulator": (simulator or {}).get(smallest.test_id, "")})
        listed[category] = entries
    totals = table.totals()
    data = {
        "ptoas": table.ptoas, "version": table.version, "seconds": round(table.seconds, 1), "runs": table.runs,
        "cases": len(table.rows), "ops": len({r.case.op for r in table.rows}),
        "totals": {c: totals.get(c, 0) for c in CATEGORIES},
        "per_op": [{"op": op, "profile": p, **{c: n.get(c, 0) for c in CATEGORIES}}
                   for (op, p), n in table.per_op().items()],
        "groups": listed,
        "not_expressed": Counter(blank(r.message) for r in table.rows if r.category == "not-expressed").most_common(),
    }
    replace_in(out, "report.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    replace_in(out, "report.md", _markdown(data))
    return data


def _markdown(d: dict) -> str:
    t = d["totals"]
    lines = [f"# ptoas verifier table ({d['version']}, {d['ptoas']})", "",
             f"{d['cases']} cases of {d['ops']} instructions in {d['seconds']} s ({d['runs']} ptoas runs).", "",
             "| " + " | ".join(CATEGORIES) + " |", "|" + "---|" * len(CATEGORIES),
             "| " + " | ".join(str(t[c]) for c in CATEGORIES) + " |", ""]
    titles = {"gap": "Spec rejects, ptoas accepts (verifier gaps)",
              "strict": "Spec accepts, ptoas rejects (verifier too strict, or the spec's table too loose)",
              "choice": "Explained by the dialect's choices (specs/ptoas.yaml)",
              "unreadable": "Not read by ptoas's parser", "helper": "Rejected on a helper statement",
              "crashed": "ptoas crashed"}
    for category, title in titles.items():
        entries = d["groups"].get(category, [])
        if not entries:
            continue
        lines += [f"## {title}: {sum(e['cases'] for e in entries)} cases in {len(entries)} groups", "",
                  "| op | profile | cases | rule / message | CPU simulator | reproducer |", "|---|---|---|---|---|---|"]
        for e in entries:
            what = e["rule"] if category == "gap" else (e["choice"] or e["ptoas"])
            what = (what or "").replace("|", "\\|")
            sim = (e.get("simulator") or "").replace("|", "\\|")
            lines.append(f"| {e['op']} | {e['profile']} | {e['cases']} | {what} | {sim} | {e['repro'] or ''} |")
        lines.append("")
    if d["not_expressed"]:
        lines += ["## Not expressed in the dialect", "", "| reason | cases |", "|---|---|"]
        lines += [f"| {why} | {n} |" for why, n in d["not_expressed"]]
        lines.append("")
    lines += ["## Per instruction and profile", "", "| op | profile | " + " | ".join(CATEGORIES) + " |",
              "|---|---|" + "---|" * len(CATEGORIES)]
    for e in d["per_op"]:
        lines.append(f"| {e['op']} | {e['profile']} | " + " | ".join(str(e[c]) for c in CATEGORIES) + " |")
    return "\n".join(lines) + "\n"
