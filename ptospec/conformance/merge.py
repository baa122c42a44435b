"""Merge the ``report.json`` of the shards of one run (``--shard K/N``) into one report.

Shards hold whole instructions, so divergence groups never straddle two shards: the merged report lists every
shard's groups, sums the totals, the counters and the skip reasons, joins the matrices, and copies every
shard's reproducers."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import InvocationError
from ..inputs import read_regular
from ..outputs import replace_in

_NOT_SUMMED = {"derived_per_fixed_case"}  # the same in every shard


MAX_REPORT = 1 << 30  # a report.json of every divergence of every op is tens of megabytes


def read_report(path: Path) -> dict:
    file = path / "report.json" if path.is_dir() else path
    try:
        data = json.loads(read_regular(file, MAX_REPORT).decode("utf-8"))
    except OSError as exc:
        raise InvocationError(f"cannot read {file}: {exc.strerror}", rule="merge.read") from None
    except (ValueError, RecursionError) as exc:
        raise InvocationError(f"{file} is not JSON: {exc}", rule="merge.read") from None
    if not isinstance(data, dict) or "divergences" not in data or "totals" not in data:
        raise InvocationError(f"{file} is not a report.json of `ptospec conformance`", rule="merge.read")
    return data


def _sum(target: dict, more: dict) -> None:
    for k, v in more.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or k in _NOT_SUMMED:
            target.setdefault(k, v)
        else:
            target[k] = target.get(k, 0) + v


def merge(reports: list[dict]) -> dict:
    backends = {r["backend"] for r in reports}
    if len(backends) > 1:
        raise InvocationError(f"the reports come from different backends: {', '.join(sorted(backends))}",
                              rule="merge.backend")
    shards = [r.get("environment", {}).get("shard") for r in reports]
    known = [s for s in shards if s]
    if len(set(known)) != len(known):
        raise InvocationError(f"shard {next(s for s in known if known.count(s) > 1)} is given twice",
                              rule="merge.shard")
    totals: dict = {}
    stats: dict = {}
    skipped: dict = {}
    by_verdict: dict = {}
    by_category: dict = {}
    by_attribution: dict = {}
    for r in reports:
        _sum(totals, r["totals"])
        _sum(stats, r.get("stats", {}))
        _sum(skipped, r.get("skipped", {}))
        _sum(by_verdict, r.get("by_verdict", {}))
        _sum(by_category, r.get("by_category", {}))
        _sum(by_attribution, r.get("by_attribution", {}))
    wall = [r.get("stats", {}).get("wall_seconds") for r in reports]
    if all(isinstance(w, int | float) for w in wall):
        stats["wall_seconds"] = round(max(wall), 2)  # the shards run side by side
        stats["shard_seconds_total"] = round(sum(wall), 2)
    verified = stats.get("cases_verified")
    if isinstance(verified, int) and stats.get("wall_seconds"):
        stats["cases_verified_per_second"] = round(verified / stats["wall_seconds"], 1)
    divergences = sorted((e for r in reports for e in r["divergences"]),
                         key=lambda e: (e["category"], e["op"], e["mode"], e.get("profile") or ""))
    environment = dict(reports[0].get("environment", {}))
    environment["shard"] = "merged " + ", ".join(s for s in shards if s) if known else "merged"
    return {"backend": reports[0]["backend"], "command": reports[0].get("command", ""), "environment": environment,
            "totals": totals, "stats": stats, "skipped": skipped, "divergence_groups": len(divergences),
            "by_verdict": by_verdict, "by_category": by_category, "by_attribution": by_attribution,
            "divergences": divergences,
            "matrix": sorted((m for r in reports for m in r.get("matrix", [])),
                             key=lambda m: (m.get("op", ""), m.get("dtype", ""), m.get("profile", "")))}


def markdown(data: dict) -> str:
    t = data["totals"]
    lines = [f"# Conformance report: backend `{data['backend']}` ({data['environment'].get('shard', '')})", "",
             f"- cases: {t.get('total', 0)} ({t.get('passed', 0)} passed, {t.get('failed', 0)} failed, "
             f"{t.get('skipped', 0)} skipped)"]
    lines += [f"- {k.replace('_', ' ')}: {v}" for k, v in data["stats"].items()]
    if data["skipped"]:
        lines += ["", "## Skipped", "", "| reason | cases |", "|---|---|"]
        lines += [f"| {r} | {n} |" for r, n in sorted(data["skipped"].items(), key=lambda x: -x[1])]
    lines += ["", "## Divergences", ""]
    if not data["divergences"]:
        return "\n".join([*lines, "None.", ""])
    lines += ["| # | category | op | mode | cases | verdict | spec | smallest case | repro |",
              "|---|---|---|---|---|---|---|---|---|"]
    for i, e in enumerate(data["divergences"], 1):
        s = e["smallest"]
        spec = f"`{e['difference']}` ({e['difference_kind']})" if e["difference"] else "-"
        lines.append(f"| {i} | {e['category']} | {e['op']} | {e['mode']} | {e['count']} | {e['verdict']} | {spec} | "
                     f"`{s['case']}` | {s.get('repro_file') or s.get('inputs_file', '')} |")
    lines.append("")
    for i, e in enumerate(data["divergences"], 1):
        s = e["smallest"]
        lines += [f"### {i}. {e['category']}: {e['op']} {e['mode']} -- {e['verdict']}", "", f"Cause: {e['cause']}.",
                  "", f"Why: {e['why']}.", ""]
        lines += [f"- `{n}`: `{d}`" for n, d in s["tiles"].items()]
        if s.get("rule"):
            lines.append(f"- must be rejected for rule `{s['rule']}`")
        if s.get("message"):
            lines.append(f"- backend: {s['message']}")
        lines.append("")
    return "\n".join(lines)


def merge_reports(inputs: list[Path], out: Path) -> dict:
    if not inputs:
        raise InvocationError("give the shard report directories (or report.json files) to merge", rule="merge.read")
    reports = [read_report(p) for p in inputs]
    try:  # a report.json is outside input: one of another shape is one line, and nothing is written
        data = merge(reports)
        text = markdown(data)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        what = f"no field {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise InvocationError(f"a report is not of the form `ptospec conformance` writes ({what})",
                              rule="merge.read") from None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvocationError(f"cannot create {out}: {exc.strerror or exc}", rule="merge.write") from None
    for p in inputs:
        repros = (p if p.is_dir() else p.parent) / "repros"
        if repros.is_dir() and repros.resolve() != (out / "repros").resolve():
            _copy_repros(repros, out)
    replace_in(out, "report.json", json.dumps(data, indent=2) + "\n")
    replace_in(out, "report.md", text)
    return data


def _copy_repros(repros: Path, out: Path) -> None:
    """Copy a shard's reproducers (regular files only: a link in a shard's folder is neither followed nor
    copied) into ``out/repros``, each written atomically and never through a link found there."""
    for folder, _dirs, files in os.walk(repros):  # os.walk does not descend into linked folders
        for name in sorted(files):
            source = Path(folder) / name
            if source.is_symlink() or not source.is_file():
                continue
            rel = source.relative_to(repros).as_posix()
            try:
                data = source.read_bytes()
            except OSError as exc:
                raise InvocationError(f"cannot read {source}: {exc.strerror or exc}", rule="merge.read") from None
            replace_in(out, f"repros/{rel}", data)
