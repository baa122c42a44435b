"""``differences`` (what sources disagree on, and what was observed), ``performance`` tables and ``usage``
notes."""

from __future__ import annotations

from ..model import Difference, DTypeTable, Mode, Observation, Omission, PerfTable, Rule, UsageNote
from .context import OpContext


def build_differences(ctx: OpContext, modes: tuple[Mode, ...], rules: tuple[Rule, ...],
                      tables: dict[str, DTypeTable]) -> tuple[Difference, ...]:
    rule_ids = {r.id for r in rules} | {r.id for r in (*ctx.isa.tile_rules, *ctx.isa.global_rules)}
    differences = []
    for i, diff in enumerate(ctx.src.data.get("differences", [])):
        dp = ("differences", i)
        ctx.check_sources(dp, [c["source"] for c in diff["claims"]])
        observed = tuple(_observation(ctx, (*dp, "observed", j), obs, modes, rule_ids)
                         for j, obs in enumerate(diff.get("observed", [])))
        omits = tuple(_omission(ctx, dp, o, tables, modes) for o in diff.get("omits", ()))
        differences.append(
            Difference(diff["id"], diff["topic"], tuple((c["source"], dict(c["says"])) for c in diff["claims"]),
                       diff["resolution"], diff["kind"], ctx.src.line(dp), observed, omits)
        )
    return tuple(differences)


def _omission(ctx: OpContext, dp: tuple, o: dict, tables: dict[str, DTypeTable],
              modes: tuple[Mode, ...]) -> Omission:
    """Types a header admits that the table leaves out: they must be known dtypes absent from that table (from
    the rows of ``modes``, when the omission names some)."""
    table = tables.get(o["profile"])
    only = tuple(o.get("modes", ()))
    unknown_modes = sorted(set(only) - {m.name for m in modes})
    if unknown_modes:
        ctx.add(dp, f"omits: unknown mode(s) {', '.join(unknown_modes)}", "op.omits")
    rows = () if table is None else tuple(r for r in table.rows
                                          if not only or not r.modes or set(r.modes) & set(only))
    if table is None or not any(o["var"] in r.types for r in rows):
        where = f" (modes {', '.join(only)})" if only else ""
        ctx.add(dp, f"omits: no {o['profile']} table with type variable {o['var']}{where}", "op.omits")
    else:
        listed = {t for r in rows for t in r.types.get(o["var"], ())} & set(o["dtypes"])
        unknown = set(o["dtypes"]) - set(ctx.isa.dtypes)
        if listed or unknown:
            ctx.add(dp, f"omits: {o['profile']} {o['var']} lists {', '.join(sorted(listed | unknown))}: a recorded "
                    "omission must be a known dtype absent from the table", "op.omits")
    return Omission(o["profile"], o["var"], tuple(o["dtypes"]), only)


def _observation(ctx: OpContext, op_path: tuple, obs: dict, modes: tuple[Mode, ...], rule_ids: set[str]) -> Observation:
    by_mode = {m.name: m for m in modes}
    if obs["profile"] not in ctx.isa.profiles:
        ctx.add(op_path, f"unknown profile {obs['profile']!r}", "op.profile")
    unknown = [m for m in obs.get("modes", []) if m not in by_mode]
    if unknown:
        ctx.add(op_path, f"unknown mode(s) {', '.join(unknown)}", "op.mode")
    when = ctx.parse((*op_path, "when"), obs["when"]) if "when" in obs else None
    for mn in obs.get("modes") or list(by_mode):
        if when is not None and mn in by_mode:
            known = {o.name for o in by_mode[mn].operands} | ctx.let_names | set(by_mode[mn].type_vars)
            ctx.check_names((*op_path, "when"), when, known)
    unknown = [r for r in obs.get("rules", []) if r not in rule_ids and not r.startswith("dtype.")]
    if unknown:
        ctx.add(op_path, f"unknown rule(s) {', '.join(unknown)}", "op.rule")
    return Observation(obs["profile"], obs["as"], tuple(obs.get("modes", [])), tuple(obs.get("rules", [])), when,
                       obs.get("when", ""))


def build_performance(ctx: OpContext) -> tuple[PerfTable, ...]:
    perf = []
    for i, p in enumerate(ctx.src.data.get("performance", [])):
        pp = ("performance", i)
        if p["profile"] not in ctx.isa.profiles:
            ctx.add(pp, f"unknown profile {p['profile']!r}", "op.profile")
        ctx.check_sources(pp, [p["source"]])
        for row in p["rows"]:
            if len(row) != len(p["columns"]):
                ctx.add(pp, "every performance row needs one cell per column", "op.performance")
        perf.append(PerfTable(p["profile"], p["title"], tuple(p["columns"]),
                              tuple(tuple(c if isinstance(c, dict) else str(c) for c in row) for row in p["rows"]),
                              p["source"]))
    return tuple(perf)


def build_usage(ctx: OpContext) -> tuple[UsageNote, ...]:
    notes = []
    for i, u in enumerate(ctx.src.data.get("usage", [])):
        ctx.check_sources(("usage", i), u["sources"])
        notes.append(UsageNote(u["kind"], u["text"], tuple(u["sources"])))
    return tuple(notes)
