"""``dtypes``: per profile, the rows of legal element types of each mode's type variables."""

from __future__ import annotations

from ..model import DTypeRow, DTypeTable, Mode
from .context import OpContext


def build_dtype_tables(ctx: OpContext, modes: tuple[Mode, ...]) -> dict[str, DTypeTable]:
    by_mode = {m.name: m for m in modes}
    tables: dict[str, DTypeTable] = {}
    for prof, t in ctx.src.data["dtypes"].items():
        tp = ("dtypes", prof)
        if prof not in ctx.isa.profiles:
            ctx.add(tp, f"unknown profile {prof!r} (known: {', '.join(ctx.isa.profiles)})", "op.profile")
            continue
        ctx.check_sources(tp, t["sources"])
        rows = tuple(_row(ctx, (*tp, "rows", i), prof, r, by_mode) for i, r in enumerate(t["rows"]))
        tables[prof] = DTypeTable(prof, rows, t["basis"], tuple(t["sources"]), t.get("note", {}))
    _check_asm_types(ctx, modes, tables)
    return tables


def _row(ctx: OpContext, rp: tuple, prof: str, r: dict, by_mode: dict[str, Mode]) -> DTypeRow:
    isa = ctx.isa
    rmodes = tuple(r.get("modes", list(by_mode)))
    for mn in rmodes:
        if mn not in by_mode:
            ctx.add(rp, f"unknown mode {mn!r}", "op.mode")
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
                ctx.add(rp, f"unknown dtype {dt_name!r}", "op.dtype")
            elif not dt.exists_on(prof):
                ctx.add(rp, f"dtype {dt_name} does not exist on profile {prof}", "op.dtype")
        types[var] = tuple(allowed)
    for mn in rmodes:
        if mn in by_mode and set(types) != set(by_mode[mn].type_vars):
            ctx.add(rp, f"row must give every type variable of mode {mn} ({', '.join(by_mode[mn].type_vars)}), "
                    f"got {', '.join(types)}", "op.dtype-vars")
    return DTypeRow(rmodes, types, r.get("note", {}), ctx.src.line(rp))


def _check_asm_types(ctx: OpContext, modes: tuple[Mode, ...], tables: dict[str, DTypeTable]) -> None:
    """An operand assembly types by a word of its own (index) has one dtype everywhere."""
    for m in modes:
        for o in m.operands:
            if o.asm_type and o.role == "scalar":
                found = {dt for tab in tables.values() for r in tab.rows if not r.modes or m.name in r.modes
                         for dt in r.types.get(o.dtype, ())}
                if len(found) != 1:
                    ctx.add(("modes", m.name, "operands"), f"{o.name}: asm_type {o.asm_type} needs its type "
                            f"variable {o.dtype} to take one dtype on every profile, got {sorted(found)}",
                            "op.operands")
